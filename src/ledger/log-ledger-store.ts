import type { CostRecord } from "../metering/cost-record.ts";
import type { LedgerStore } from "./ledger-store.ts";

// The Workers ledger: each record is one JSON line in the Worker's log, where Workers Logs and
// Logpush (to R2, S3, BigQuery, …) keep it after the isolate is gone. Workers have no Redis
// client and no files; the log is the durable channel every Worker already has.
//
// A consumer may see a record twice (the ledger retries a batch whose write failed, though a log
// write does not fail): each line carries the request id to deduplicate by.

/** What each line's `type` says, for a log query to select cost records by. */
export const COST_RECORD_LOG_TYPE = "tollgate.cost_record";

export class LogLedgerStore implements LedgerStore {
  constructor(private readonly writeLine: (line: string) => void = console.log) {}

  async write(records: readonly CostRecord[]): Promise<void> {
    for (const record of records) this.writeLine(JSON.stringify({ type: COST_RECORD_LOG_TYPE, record }));
  }

  async close(): Promise<void> {}
}
