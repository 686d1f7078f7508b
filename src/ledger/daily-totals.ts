import type { CostRecord } from "../metering/cost-record.ts";
import { AGGREGATE_METRICS, aggregateIncrements, dimensionsKey, dimensionsOf, recordDay, type AggregateDimensions, type AggregateEntry, type AggregateMetric } from "./ledger-store.ts";

/** Where each metric's sum sits in a combination's row of sums. */
const SLOT = new Map<AggregateMetric, number>(AGGREGATE_METRICS.map((metric, index) => [metric, index]));

/** Numbers while exact; a sum that would pass 2^53 goes on as a BigInt. */
type Combination = { dimensions: AggregateDimensions; sums: (number | bigint)[] };

/** Per day, each combination's dimensions and sums in AGGREGATE_METRICS' order; a sum past 2^53 as a decimal string. */
export type DailyTotalsState = [day: string, rows: [AggregateDimensions, (number | string)[]][]][];

/**
 * The aggregates of the embedded file store, in this process: the same sums the Redis store keeps
 * in its `totals` hash, by day. A day holds one row of sums per combination of route, key, team,
 * provider and model, however many records it has, so a report never rereads the records. Memory
 * grows with days × combinations (about 350 bytes each here): 500 key × route combinations a day
 * are some 60 MB a year.
 */
export class DailyTotals {
  private readonly days = new Map<string, Map<string, Combination>>();

  /** Adds a record's increments. The caller adds each request id once (the stores dedupe first). */
  add(record: CostRecord): void {
    const day = recordDay(record);
    let combinations = this.days.get(day);
    if (!combinations) this.days.set(day, (combinations = new Map()));
    const dimensions = dimensionsOf(record);
    const key = dimensionsKey(dimensions);
    let combination = combinations.get(key);
    if (!combination) combinations.set(key, (combination = { dimensions, sums: new Array<number | bigint>(AGGREGATE_METRICS.length).fill(0) }));
    for (const [metric, value] of aggregateIncrements(record)) {
      const slot = SLOT.get(metric)!;
      const sum = combination.sums[slot]!;
      combination.sums[slot] = typeof sum === "number" && Number.isSafeInteger(sum + value) ? sum + value : BigInt(sum) + BigInt(value);
    }
  }

  /** The sums as JSON can hold them (a BigInt as its decimal string), for the ledger's checkpoint. */
  snapshot(): DailyTotalsState {
    return [...this.days].map(([day, combinations]) => [day, [...combinations.values()].map(({ dimensions, sums }) => [dimensions, sums.map((sum) => (typeof sum === "bigint" ? sum.toString() : sum))])]);
  }

  static restore(state: DailyTotalsState): DailyTotals {
    const totals = new DailyTotals();
    for (const [day, rows] of state) {
      const combinations = new Map<string, Combination>();
      for (const [dimensions, sums] of rows) {
        combinations.set(dimensionsKey(dimensions), { dimensions, sums: AGGREGATE_METRICS.map((_, slot) => (typeof sums[slot] === "string" ? BigInt(sums[slot]) : (sums[slot] ?? 0))) });
      }
      totals.days.set(day, combinations);
    }
    return totals;
  }

  totals(day: string): AggregateEntry[] {
    const entries: AggregateEntry[] = [];
    for (const { dimensions, sums } of this.days.get(day)?.values() ?? []) {
      sums.forEach((value, slot) => {
        // As in Redis, where a zero increment is never written.
        if (value !== 0 && value !== 0n) entries.push({ dimensions: { ...dimensions }, metric: AGGREGATE_METRICS[slot]!, value });
      });
    }
    return entries;
  }
}
