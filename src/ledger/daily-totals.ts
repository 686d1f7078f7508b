import type { CostRecord } from "../metering/cost-record.ts";
import { aggregateIncrements, dimensionsOf, recordDay, type AggregateEntry } from "./ledger-store.ts";

/**
 * The aggregates of the stores that keep them in this process (the embedded file, memory), the
 * same sums the Redis store keeps in its `totals` hash: by day, then by dimensions and metric.
 * A day with a few hundred combinations of route, key, team, provider and model is a few hundred
 * small objects, however many records it has, so a report never rereads the records.
 */
export class DailyTotals {
  private readonly days = new Map<string, Map<string, AggregateEntry>>();

  /** Adds a record's increments. The caller adds each request id once (the stores dedupe first). */
  add(record: CostRecord): void {
    const day = recordDay(record);
    let entries = this.days.get(day);
    if (!entries) this.days.set(day, (entries = new Map()));
    const dimensions = dimensionsOf(record);
    const head = JSON.stringify([dimensions.route, dimensions.keyId, dimensions.team, dimensions.provider, dimensions.model]);
    for (const [metric, value] of aggregateIncrements(record)) {
      const field = `${head}${metric}`;
      const entry = entries.get(field);
      if (entry) entry.value += value;
      else entries.set(field, { dimensions, metric, value });
    }
  }

  /** A copy of the day's aggregates: the caller may hold it while records go on being added. */
  totals(day: string): AggregateEntry[] {
    return [...(this.days.get(day)?.values() ?? [])].map((entry) => ({ ...entry }));
  }
}
