import { appendFile, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { CostRecord } from "../metering/cost-record.ts";
import type { AggregateEntry, LedgerStore } from "./ledger-store.ts";
import { RecentIds } from "../runtime/recent-ids.ts";
import { DailyTotals } from "./daily-totals.ts";

// The embedded store: one JSON record per line, appended, never rewritten, so records survive a
// restart and a crash loses at most the line being written. Ids already in the file are read at
// open, which makes a retried write idempotent here too. Node only.
//
// The file is read line by line, never as one string: a day at 10 requests/s writes about 600 MB,
// and V8 refuses a string over 512 MB (2^29 − 24 characters), so reading it whole stopped the
// gateway from starting again. Start-up still reads every record once (about 1 s per 100 MB here),
// and keeps the daily aggregates cost reports read, so a report never reads the file again.

export class FileLedgerStore implements LedgerStore {
  private constructor(
    readonly path: string,
    private readonly written: RecentIds,
    private readonly aggregates: DailyTotals,
    /** The file ends in the middle of a line (a crash mid-append): start the next write on a new one. */
    private needsNewline: boolean,
  ) {}

  /** Opens (or creates) the file; `visit` sees every record already in it, read this once. */
  static async open(path: string, visit?: (record: CostRecord) => void): Promise<FileLedgerStore> {
    await mkdir(dirname(path), { recursive: true });
    const written = new RecentIds();
    const aggregates = new DailyTotals();
    // readLedger fills `written` with the ids it reads.
    const endsMidLine = await readLedger(
      path,
      (record) => {
        aggregates.add(record);
        visit?.(record);
      },
      written,
    );
    return new FileLedgerStore(path, written, aggregates, endsMidLine);
  }

  async write(records: readonly CostRecord[]): Promise<void> {
    // Each id once, also within the batch: reopened, the file counts the first of two lines only.
    const ids = new Set<string>();
    const fresh: CostRecord[] = [];
    for (const record of records) {
      if (this.written.has(record.requestId) || ids.has(record.requestId)) continue;
      ids.add(record.requestId);
      fresh.push(record);
    }
    if (fresh.length === 0) return;
    const lines = fresh.map((record) => JSON.stringify(record) + "\n").join("");
    try {
      await appendFile(this.path, (this.needsNewline ? "\n" : "") + lines);
    } catch (error) {
      // Part of the batch may be on disk as a torn line: the retry starts on a fresh one.
      this.needsNewline = true;
      throw error;
    }
    this.needsNewline = false;
    for (const record of fresh) {
      this.written.add(record.requestId);
      this.aggregates.add(record);
    }
  }

  async totals(day: string): Promise<AggregateEntry[]> {
    return this.aggregates.totals(day);
  }

  async close(): Promise<void> {}
}

/**
 * Calls `visit` with every whole record of a ledger file, in order, one line at a time; a torn
 * line (a crash mid-append) is skipped. A missing file has no records. Resolves to whether the
 * file ends in the middle of a line.
 *
 * Each request id is visited once. An append that failed part-way (a full disk) leaves the lines
 * that landed, and its retry writes the whole batch again: those records are in the file twice,
 * a few lines apart, and counting them twice would double their spend. `seen` remembers the
 * recent ids (a caller may pass its own set, which is then filled as the file is read).
 */
export async function readLedger(path: string, visit: (record: CostRecord) => void, seen: RecentIds = new RecentIds()): Promise<boolean> {
  let file;
  try {
    file = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  try {
    // Line events, not `for await`: the async iterator costs a promise per line, several times
    // the parsing itself on a file of a million records.
    const lines = createInterface({ input: file.createReadStream({ autoClose: false }), crlfDelay: Infinity });
    let failure: unknown;
    let first = true;
    lines.on("line", (text) => {
      // A file saved once by an editor that writes a byte order mark would lose its first record.
      const line = first && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
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
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await file.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
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
