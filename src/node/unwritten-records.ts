import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import type { CostRecord } from "../metering/cost-record.ts";

// A gateway stopped while Redis is away would drop the cost records it could not write: billed
// requests with no record. They are kept in a file of their own beside the embedded ledger's
// (`unwritten-<uuid>.jsonl`), and the next gateway to start on that directory writes them to
// Redis and charges to the budgets before it serves (their settles died with the old process).
// Both are idempotent by request id, so a file replayed twice (two gateways at once) counts once.

const PREFIX = "unwritten-";

/** Keeps the records `Ledger.close()` could not write, for the next start. */
export function keepUnwritten(directory: string): (records: readonly CostRecord[]) => Promise<string> {
  return async (records) => {
    await mkdir(directory, { recursive: true });
    const path = join(directory, `${PREFIX}${randomUUID()}.jsonl`);
    await writeFile(path, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
    return path;
  };
}

/**
 * Writes the records earlier gateways kept and charges them to the budgets (`charge`: both are
 * idempotent by request id), then removes their files. A file that fails stays for the next start.
 */
export async function replayUnwritten(directory: string, store: LedgerStore, charge: (record: CostRecord) => Promise<void>, log: (line: string) => void): Promise<void> {
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const name of names.filter((each) => each.startsWith(PREFIX) && each.endsWith(".jsonl"))) {
    const path = join(directory, name);
    try {
      const records = (await readFile(path, "utf8"))
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as CostRecord);
      await store.write(records);
      for (const record of records) await charge(record);
      await rm(path, { force: true });
      log(`[tollgate] wrote ${records.length} cost records an earlier gateway could not write before it stopped (${path})`);
    } catch (error) {
      log(`[tollgate] error: could not write the cost records kept in ${path} (${(error as Error).message}); trying again at the next start`);
    }
  }
}
