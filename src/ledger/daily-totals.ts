import type { CostRecord } from "../metering/cost-record.ts";
import { aggregateEntry, aggregateIncrements, dimensionsOf, recordDay, totalsFields, type AggregateEntry } from "./ledger-store.ts";

/**
 * The aggregates of the stores that keep them in this process (the embedded file, memory): the
 * same sums under the same keys as the Redis store's `totals` hash, by day. A day holds one number
 * per combination of route, key, team, provider, model and metric, however many records it has,
 * so a report never rereads the records.
 */
export class DailyTotals {
  private readonly days = new Map<string, Map<string, number>>();

  /** Adds a record's increments. The caller adds each request id once (the stores dedupe first). */
  add(record: CostRecord): void {
    const day = recordDay(record);
    let sums = this.days.get(day);
    if (!sums) this.days.set(day, (sums = new Map()));
    const fieldOf = totalsFields(dimensionsOf(record));
    for (const [metric, value] of aggregateIncrements(record)) {
      const field = fieldOf(metric);
      sums.set(field, (sums.get(field) ?? 0) + value);
    }
  }

  totals(day: string): AggregateEntry[] {
    return [...(this.days.get(day) ?? [])].map(([field, value]) => aggregateEntry(field, value));
  }
}
