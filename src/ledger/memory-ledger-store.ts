import { LRUCache } from "lru-cache";
import type { CostRecord } from "../metering/cost-record.ts";
import type { LedgerStore } from "./ledger-store.ts";

/**
 * Keeps the latest records in this process only: the default of createGateway when it is given no
 * ledger (tests, embedding), bounded so that a long-running process does not grow without end.
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly records: LRUCache<string, CostRecord>;

  constructor(maxRecords = 10_000) {
    this.records = new LRUCache({ max: maxRecords });
  }

  async write(records: readonly CostRecord[]): Promise<void> {
    for (const record of records) if (!this.records.has(record.requestId)) this.records.set(record.requestId, record);
  }

  async close(): Promise<void> {}
}
