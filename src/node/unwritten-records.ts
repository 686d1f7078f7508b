import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SettlePlan } from "../budgets/admission-store.ts";
import { UnwritableRecords, type LedgerStore } from "../ledger/ledger-store.ts";
import type { CostRecord } from "../metering/cost-record.ts";

// A gateway stopped while Redis is away would drop the cost records it could not write: billed
// requests with no record. They are kept in a file of their own beside the embedded ledger's
// (`unwritten-<store>-<uuid>.jsonl`), and the next gateway on the same store to start on that
// directory writes them to Redis before it serves; the budget settlements it could not make are
// kept and made the same way. Both are idempotent by request id, so a file replayed twice (two
// gateways at once) counts once. `<store>` is the store's tag (kept-files-tag.ts): a gateway of
// another store (another Redis, or another keyPrefix on the same one) leaves the file alone.

const PREFIX = "unwritten-";
/** Budget settlements a stopped gateway could not make: applied at the next start too. */
const SETTLE_PREFIX = "unsettled-";

/** Where kept files go, and the tag of the store they belong to. */
export type KeptFiles = { directory: string; storeTag: string };

/** Keeps the records `Ledger.close()` could not write, for the next start. */
export function keepUnwritten({ directory, storeTag }: KeptFiles, prefix = PREFIX): (records: readonly object[]) => Promise<string> {
  return async (records) => {
    await mkdir(directory, { recursive: true });
    const path = join(directory, `${prefix}${storeTag}-${randomUUID()}.jsonl`);
    // Written whole under another name, then renamed: a gateway starting meanwhile never reads
    // (and removes) a file half-written.
    const partial = `${path}.partial`;
    const file = await open(partial, "w");
    try {
      await file.writeFile(records.map((record) => JSON.stringify(record)).join("\n") + "\n");
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(partial, path);
    return path;
  };
}

/** Keeps the settlements `Admission.finishSettling()` could not make, for the next start. */
export function keepUnsettled(kept: KeptFiles): (plans: readonly SettlePlan[]) => Promise<string> {
  return keepUnwritten(kept, SETTLE_PREFIX);
}

/**
 * Whether a kept file is this store's: its tag, or none (`<prefix><uuid>.jsonl`, kept before files
 * named their store: whose they are is unknown, and the first gateway to start replays them, as
 * it did then).
 */
function isOwnFile(name: string, prefix: string, storeTag: string): boolean {
  if (!name.startsWith(prefix) || !name.endsWith(".jsonl")) return false;
  return name.startsWith(`${prefix}${storeTag}-`) || UNTAGGED.test(name.slice(prefix.length));
}

/** The rest of a kept file's name that names no store: a bare uuid. */
const UNTAGGED = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}\.jsonl$/;

/**
 * Makes the settlements and writes the records earlier gateways kept, then removes their files.
 * A file that fails stays, and the result says so (false): the caller tries again later.
 */
export async function replayUnwritten(
  { directory, storeTag }: KeptFiles,
  stores: { ledger: LedgerStore; settle: (plan: SettlePlan) => Promise<void> },
  log: (line: string) => void,
): Promise<boolean> {
  let allDone = true;
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const name of names.filter((each) => isOwnFile(each, SETTLE_PREFIX, storeTag))) allDone = (await replayFile(join(directory, name), stores.settle, log)) && allDone;
  const files = names.filter((each) => isOwnFile(each, PREFIX, storeTag));
  for (const [index, name] of files.entries()) {
    const path = join(directory, name);
    const records: CostRecord[] = [];
    const unreadable: string[] = [];
    try {
      for (const line of (await readFile(path, "utf8")).split("\n")) {
        if (line.trim() === "") continue;
        try {
          records.push(JSON.parse(line) as CostRecord);
        } catch {
          unreadable.push(line);
        }
      }
    } catch (error) {
      allDone = false;
      log(`[tollgate] error: could not read the cost records kept in ${path} (${(error as Error).message}); trying again later`);
      continue;
    }
    try {
      await stores.ledger.write(records).catch((error: unknown) => {
        // The rest are written; these never will be, and must not hold the file back for ever.
        if (!(error instanceof UnwritableRecords)) throw error;
        for (const line of error.logLines()) log(line);
      });
    } catch (error) {
      // The store is down: the files after this one would fail the same way, each with a line.
      const others = files.length - index - 1;
      log(`[tollgate] error: could not write the cost records kept in ${path}${others > 0 ? ` (and ${others} more files)` : ""} (${(error as Error).message}); trying again later`);
      return false;
    }
    try {
      // A torn line (a disk that filled up) must not hold back the whole file for ever: it is set
      // aside for a person to read, and the rest is written.
      if (unreadable.length > 0) {
        await writeFile(`${path}.unreadable`, unreadable.join("\n") + "\n");
        log(`[tollgate] error: ${unreadable.length} lines of ${path} are not records; set aside in ${path}.unreadable`);
      }
      await rm(path, { force: true });
      log(`[tollgate] wrote ${records.length} cost records kept while the store was away, by an earlier gateway or past this one's memory bound (${path})`);
    } catch (error) {
      allDone = false;
      log(`[tollgate] error: could not remove ${path} after writing its records (${(error as Error).message}); trying again later (written twice counts once)`);
    }
  }
  return allDone;
}

/** How often a gateway tries again to write what earlier ones kept, while the store refuses. */
export const REPLAY_RETRY_MS = 60_000;

/** Applies each kept settlement of one file, then removes it; a failure leaves it for the next try. */
async function replayFile(path: string, settle: (plan: SettlePlan) => Promise<void>, log: (line: string) => void): Promise<boolean> {
  try {
    const plans = (await readFile(path, "utf8"))
      .split("\n")
      .flatMap((line) => {
        try {
          return line.trim() === "" ? [] : [JSON.parse(line) as SettlePlan];
        } catch {
          return []; // a torn last line: its settlement is lost, the reservation expires on its own
        }
      });
    for (const plan of plans) await settle(plan);
    await rm(path, { force: true });
    log(`[tollgate] applied ${plans.length} budget settlements an earlier gateway could not make before it stopped (${path})`);
    return true;
  } catch (error) {
    log(`[tollgate] error: could not apply the budget settlements kept in ${path} (${(error as Error).message}); trying again later`);
    return false;
  }
}
