import { appendFile, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { CostRecord } from "../metering/cost-record.ts";
import type { AggregateEntry, LedgerStore } from "./ledger-store.ts";
import { RecentIds } from "../runtime/recent-ids.ts";
import { DailyTotals, type DailyTotalsState } from "./daily-totals.ts";
import { checkpointPath, CHECKPOINT_VERSION, readCheckpoint, tailHash, writeCheckpoint, type LedgerCheckpoint, type LedgerFollower } from "./ledger-checkpoint.ts";

// The embedded store: one JSON record per line, appended, never rewritten, so records survive a
// restart and a crash tears at most the line being written (the records still queued in the
// Ledger, not yet appended, are lost with the process: docs/metering.md). Ids already in the file are read at
// open, which makes a retried write idempotent here too. Node only.
//
// The file is read line by line, never as one string: a day at 10 requests/s writes about 600 MB,
// and V8 refuses a string over 512 MB (2^29 − 24 characters), so reading it whole stopped the
// gateway from starting again. Start-up keeps the daily aggregates cost reports read, so a report
// never reads the file again. It reads each record once (about 1 s per 100 MB here), except those
// the checkpoint of the last clean stop covers (ledger-checkpoint.ts).

export type FileLedgerOptions = {
  /** Sees every record of the ledger, those in the file at open and those written since (the budgets' spend). */
  follower?: LedgerFollower;
  /** Where start-up says how much it read, and why a checkpoint was not used. */
  log?: (line: string) => void;
};

/** How many of the newest request ids a checkpoint keeps (a torn append's retry is a few lines on). */
const CHECKPOINT_IDS = 10_000;

export class FileLedgerStore implements LedgerStore {
  private constructor(
    readonly path: string,
    private readonly written: RecentIds,
    private readonly aggregates: DailyTotals,
    /** The file ends in the middle of a line (a crash mid-append): start the next write on a new one. */
    private needsNewline: boolean,
    private readonly follower: LedgerFollower | undefined,
    /** Records in the file (the checkpoint's and those read or written since). */
    private records: number,
    private readonly log: (line: string) => void,
    /**
     * Bytes of the file whose records are counted in memory: what a checkpoint may cover. Kept
     * here, not read from the disk at close, where a write in flight may have put records not
     * counted yet. Unknown (undefined) for good after an append that failed part-way: the file's
     * size then would also count any other process's lines, which this one never counted.
     */
    private counted: number | undefined,
  ) {}

  /** Appends run one at a time, so the file's order is the order they are counted in. */
  private appending: Promise<unknown> = Promise.resolve();
  /** Bytes of the append running now (0: none), which may be on disk, wholly or in part, before they are counted. */
  private inFlightBytes = 0;

  /**
   * Opens (or creates) the file. The records a checkpoint covers (see ledger-checkpoint.ts) are
   * restored from it; the rest are read, and `follower` sees each of them.
   */
  static async open(path: string, options: FileLedgerOptions = {}): Promise<FileLedgerStore> {
    const { follower, log = () => {} } = options;
    await mkdir(dirname(path), { recursive: true });
    const started = performance.now();
    const written = new RecentIds();
    let aggregates = new DailyTotals();
    let from = 0;
    let records = 0;
    let restored = 0;
    // A follower that cannot be checkpointed must see every record: the whole file is read.
    if (!follower || follower.checkpoint) {
      const found = await findCheckpoint(path, follower?.checkpoint?.fingerprint);
      if (found && "unusable" in found) log(`[tollgate] ledger: the checkpoint ${checkpointPath(path)} is not used, ${found.unusable}; reading the whole file`);
      else if (found) {
        aggregates = DailyTotals.restore(found.days as DailyTotalsState);
        if (follower && found.follower) follower.checkpoint!.restore(found.follower.state);
        for (const id of found.recentIds) written.add(id);
        from = found.size;
        records = restored = found.records;
      }
    }
    const read = await readLedger(
      path,
      (record) => {
        records += 1;
        aggregates.add(record);
        follower?.add(record);
      },
      written, // readLedger fills it with the ids it reads
      from,
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (read.bytes >= LOG_READS_FROM) log(`[tollgate] ledger: read ${megabytes(read.bytes)} of ${path} in ${seconds} s${from > 0 ? ` (the ${megabytes(from)} and ${restored} records before it from its checkpoint)` : "; a clean stop leaves a checkpoint, after which a start reads only what came since"}`);
    return new FileLedgerStore(path, written, aggregates, read.endsMidLine, follower, records, log, from + read.bytes);
  }

  write(records: readonly CostRecord[]): Promise<void> {
    const run = this.appending.then(() => this.append(records));
    this.appending = run.catch(() => undefined);
    return run;
  }

  private async append(records: readonly CostRecord[]): Promise<void> {
    // Each id once, also within the batch: reopened, the file counts the first of two lines only.
    const ids = new Set<string>();
    const fresh: CostRecord[] = [];
    for (const record of records) {
      if (this.written.has(record.requestId) || ids.has(record.requestId)) continue;
      ids.add(record.requestId);
      fresh.push(record);
    }
    if (fresh.length === 0) return;
    const text = (this.needsNewline ? "\n" : "") + fresh.map((record) => JSON.stringify(record) + "\n").join("");
    const bytes = Buffer.byteLength(text);
    this.inFlightBytes = bytes;
    try {
      await appendFile(this.path, text);
    } catch (error) {
      // Part of the batch may be on disk as a torn line: the retry starts on a fresh one.
      this.needsNewline = true;
      this.counted = undefined; // how much landed is unknown until the next append that succeeds
      throw error;
    } finally {
      this.inFlightBytes = 0;
    }
    if (this.counted !== undefined) this.counted += bytes;
    this.needsNewline = false;
    for (const record of fresh) {
      this.written.add(record.requestId);
      this.aggregates.add(record);
      this.follower?.add(record);
    }
    this.records += fresh.length;
  }

  async totals(day: string): Promise<AggregateEntry[]> {
    return this.aggregates.totals(day);
  }

  /**
   * Leaves a checkpoint of everything written (the ledger calls this after its last write). A
   * follower that cannot be checkpointed leaves none: the next start reads the whole file anyway.
   */
  async close(): Promise<void> {
    if (this.follower && !this.follower.checkpoint) return;
    // Taken at once, before any await: the bytes counted and what they add up to, together. A
    // write still in flight lands after `size`, and the next start reads it.
    const size = this.counted;
    if (size === undefined) {
      this.log("[tollgate] ledger: no checkpoint written (an append failed part-way, so where the counted records end is unknown); the next start reads the records after the last one");
      return;
    }
    // Its bytes may be on disk, wholly or in part, with another process's after them: where the
    // counted ones end is unknown. The ledger closes the store after its last write, so this is rare.
    if (this.inFlightBytes > 0) {
      this.log("[tollgate] ledger: no checkpoint written (an append was still running); the next start reads the records after the last one");
      return;
    }
    if (size === 0) return; // nothing was ever written
    const follower = this.follower?.checkpoint;
    const state = {
      records: this.records,
      days: this.aggregates.snapshot(),
      recentIds: this.written.latest(CHECKPOINT_IDS),
      ...(follower ? { follower: { fingerprint: follower.fingerprint, state: follower.snapshot() } } : {}),
    };
    try {
      const file = await open(this.path, "r");
      try {
        // Another process appending to the same file (two gateways on one store.path, or a new
        // one started while the old one drains) puts bytes among this one's that it never
        // counted: a checkpoint of its count would end mid-line, and the next start would skip
        // the other's records for good. Without one, the next start reads them all.
        const onDisk = (await file.stat()).size;
        if (onDisk !== size) {
          this.log(
            `[tollgate] ledger: no checkpoint written: ${this.path} has ${onDisk < size ? "shrunk" : `${onDisk - size} bytes this process did not write`} since it opened it. ` +
              "Another process writes to it: give each gateway its own store.path, or use Redis (budgets here did not see that process's records); the next start reads every record after the last checkpoint",
          );
          return;
        }
        await writeCheckpoint(this.path, { version: CHECKPOINT_VERSION, size, tail: await tailHash(file, size), ...state });
      } finally {
        await file.close();
      }
    } catch (error) {
      // The records are all in the file; an older checkpoint still holds for what it covers.
      this.log(`[tollgate] ledger: no checkpoint written (${(error as Error).message}); the next start reads the records after the last one`);
    }
  }
}

/** Start-up reads of at least this many bytes are logged with their time. */
const LOG_READS_FROM = 64 * 1024 * 1024;
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function findCheckpoint(path: string, fingerprint: string | undefined): Promise<LedgerCheckpoint | { unusable: string } | undefined> {
  const file = await open(path, "r").catch(() => undefined);
  if (!file) return undefined;
  try {
    return await readCheckpoint(path, file, (await file.stat()).size, fingerprint);
  } finally {
    await file.close();
  }
}

/**
 * Calls `visit` with every whole record of a ledger file, in order, one line at a time; a torn
 * line (a crash mid-append) is skipped. A missing file has no records. `from`: the byte to start
 * at, the start of a line. Resolves to whether the file ends in the middle of a line, and how
 * many bytes were read.
 *
 * Each request id is visited once. An append that failed part-way (a full disk) leaves the lines
 * that landed, and its retry writes the whole batch again: those records are in the file twice,
 * a few lines apart, and counting them twice would double their spend. `seen` remembers the
 * recent ids (a caller may pass its own set, which is then filled as the file is read).
 */
export async function readLedger(path: string, visit: (record: CostRecord) => void, seen: RecentIds = new RecentIds(), from = 0): Promise<{ endsMidLine: boolean; bytes: number }> {
  let file;
  try {
    file = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { endsMidLine: false, bytes: 0 };
    throw error;
  }
  try {
    // Line events, not `for await`: the async iterator costs a promise per line, several times
    // the parsing itself on a file of a million records.
    const lines = createInterface({ input: file.createReadStream({ autoClose: false, start: from }), crlfDelay: Infinity });
    let failure: unknown;
    let first = true;
    lines.on("line", (text) => {
      // A file saved once by an editor that writes a byte order mark would lose its first record.
      const line = first && from === 0 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      first = false;
      if (failure !== undefined || !line.trim()) return;
      let record: CostRecord;
      try {
        record = JSON.parse(line) as CostRecord;
      } catch {
        return; // a partial line from an interrupted append; its record was retried or lost with the process
      }
      // A line of JSON that is no record (`{}` from a hand edit) has nothing to count: skip it
      // rather than stop the gateway from starting.
      if (!isRecordShaped(record)) return;
      if (seen.has(record.requestId)) return; // written again by the retry of a torn append
      seen.add(record.requestId);
      try {
        visit(record);
      } catch (error) {
        // Thrown from a stream event it would escape as an uncaught exception: stop, and reject.
        failure = error;
        lines.close();
      }
    });
    await once(lines, "close");
    if (failure !== undefined) throw failure;
    const { size } = await file.stat();
    const bytes = Math.max(0, size - from);
    if (size === 0) return { endsMidLine: false, bytes };
    const last = Buffer.alloc(1);
    await file.read(last, 0, 1, size - 1);
    return { endsMidLine: last[0] !== 0x0a, bytes };
  } finally {
    await file.close();
  }
}

function isRecordShaped(value: unknown): value is CostRecord {
  const record = value as Partial<CostRecord> | null;
  return typeof record?.requestId === "string" && typeof record.time === "string" && typeof record.usage === "object" && typeof record.cost === "object";
}

/** Every whole record of a ledger file (for reports and tests; a gateway opens it with FileLedgerStore.open). */
export async function readLedgerFile(path: string): Promise<CostRecord[]> {
  const records: CostRecord[] = [];
  await readLedger(path, (record) => records.push(record));
  return records;
}
