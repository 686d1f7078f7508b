import { LRUCache } from "lru-cache";
import type { CostRecord } from "../metering/cost-record.ts";
import { recordDay, type AggregateEntry, type LedgerStore } from "./ledger-store.ts";
import { DailyTotals } from "./daily-totals.ts";

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

  /** The aggregates of the records still held: within the bound, as everything else here. */
  async totals(day: string): Promise<AggregateEntry[]> {
    const totals = new DailyTotals();
    for (const record of this.records.values()) if (recordDay(record) === day) totals.add(record);
    return totals.totals(day);
  }

  async close(): Promise<void> {}
}
