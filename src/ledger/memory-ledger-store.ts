import type { CostRecord } from "../metering/cost-record.ts";
import type { LedgerStore } from "./ledger-store.ts";

/** Keeps records in this process only: the Workers build without Redis, and tests. */
export class MemoryLedgerStore implements LedgerStore {
  readonly records = new Map<string, CostRecord>();

  async write(records: readonly CostRecord[]): Promise<void> {
    for (const record of records) if (!this.records.has(record.requestId)) this.records.set(record.requestId, record);
  }

  async close(): Promise<void> {}
}
