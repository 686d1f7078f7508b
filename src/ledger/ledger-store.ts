import { ADMIN_NAME, type CostRecord } from "../metering/cost-record.ts";

/**
 * Where cost records are kept. `write` must be idempotent by request id: the ledger retries a
 * batch whose write failed, and a record that already landed must not be counted twice.
 */
export interface LedgerStore {
  write(records: readonly CostRecord[]): Promise<void>;
  /**
   * A UTC day's aggregates (what cost reports read). Absent where the store keeps none: the
   * Workers entry's records go to its logs.
   */
  totals?(day: string): Promise<AggregateEntry[]>;
  close(): Promise<void>;
}

/** One aggregate of a day: a metric's sum over the records with these dimensions. */
export type AggregateEntry = {
  dimensions: AggregateDimensions;
  metric: AggregateMetric;
  /** A BigInt only where the sum has passed 2^53 (a day's spend past $9M on one combination). */
  value: number | bigint;
};

/** The UTC day a record belongs to, `YYYY-MM-DD`: the unit of aggregation and of Redis hash tags. */
export function recordDay(record: CostRecord): string {
  return record.time.slice(0, 10);
}

/** The dimensions every aggregate is kept by (the day is the key it is kept under). */
export type AggregateDimensions = { route: string; keyId: string; team: string; provider: string; model: string };

export const AGGREGATE_METRICS = [
  "requests",
  "input_tokens",
  "cache_read_tokens",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_nano",
  "cache_savings_nano",
  "errors",
  "estimated",
  "unpriced",
] as const;

export type AggregateMetric = (typeof AGGREGATE_METRICS)[number];

/** What one record adds to its aggregates; zero increments are left out. */
export function aggregateIncrements(record: CostRecord): [AggregateMetric, number][] {
  const { usage, cost } = record;
  // A billed call before a fallback is part of its request's spend, not a request of its own.
  const request = record.attemptOf === undefined ? 1 : 0;
  const increments: [AggregateMetric, number][] = [
    ["requests", request],
    ["input_tokens", usage.inputTokens],
    ["cache_read_tokens", usage.cacheReadTokens],
    ["cache_write_5m_tokens", usage.cacheWrite5mTokens],
    ["cache_write_1h_tokens", usage.cacheWrite1hTokens],
    ["output_tokens", usage.outputTokens],
    ["reasoning_tokens", usage.reasoningTokens],
    ["cost_nano", cost.totalNano],
    ["cache_savings_nano", cost.cacheSavingsNano],
    ["errors", record.status === "error" ? request : 0],
    ["estimated", record.estimated ? 1 : 0],
    ["unpriced", record.unpriced ? 1 : 0],
  ];
  return increments.filter(([, value]) => value !== 0);
}

/**
 * Why a store cannot add up a record with these increments (aggregateIncrements), if it cannot:
 * every increment must be an exact integer (Redis's counters are 64-bit; a number past 2^53 is
 * no longer exact). The meter never makes such a record from a provider's usage; a price in the
 * config absurd enough still could.
 */
export function unaddableReason(increments: readonly [AggregateMetric, number][]): string | undefined {
  const bad = increments.find(([, value]) => !Number.isSafeInteger(value));
  return bad && `its ${bad[0]} of ${bad[1]} is not an exact integer`;
}

/**
 * Thrown by a store that wrote the rest of a batch but can never write these records: the
 * ledger sets them aside (logged whole) instead of retrying them, and with them every record
 * queued behind, for ever.
 */
export class UnwritableRecords extends Error {
  constructor(readonly records: readonly { record: CostRecord; reason: string }[]) {
    super(`${records.length} cost records cannot be written: ${records.map(({ record, reason }) => `${record.requestId} (${reason})`).join("; ")}`);
    this.name = "UnwritableRecords";
  }

  /** The log lines that keep each record whole, since no store will. */
  logLines(): string[] {
    return this.records.map(({ record, reason }) => `[tollgate] error: cost record ${record.requestId} cannot be written (${reason}); set aside: ${JSON.stringify(record)}`);
  }
}

export function dimensionsOf(record: CostRecord): AggregateDimensions {
  // The admin key's records written before ADMIN_NAME say "admin", a name a tenant's team or key
  // may have: their `admin` flag puts them under the reserved name, never in a tenant's totals.
  if (record.admin) return { route: record.route, keyId: ADMIN_NAME, team: ADMIN_NAME, provider: record.provider, model: record.model };
  return { route: record.route, keyId: record.keyId, team: record.team, provider: record.provider, model: record.model };
}

/**
 * The key an aggregate is kept under, in Redis's `totals` hash and in memory alike: the JSON
 * array [route, keyId, team, provider, model, metric]. Returns the key of each metric of a record's
 * dimensions (serialized once per record, not once per metric).
 */
export function totalsFields(dimensions: AggregateDimensions): (metric: AggregateMetric) => string {
  const head = dimensionsKey(dimensions).slice(0, -1);
  return (metric) => `${head},${JSON.stringify(metric)}]`;
}

/** The dimensions alone as one string, the JSON array [route, keyId, team, provider, model]. */
export function dimensionsKey(dimensions: AggregateDimensions): string {
  return JSON.stringify([dimensions.route, dimensions.keyId, dimensions.team, dimensions.provider, dimensions.model]);
}

/** An aggregate back from its key (see totalsFields) and its sum (Redis's exact integer text, or a number). */
export function aggregateEntry(field: string, sum: string | number | bigint): AggregateEntry {
  const [route, keyId, team, provider, model, metric] = JSON.parse(field) as string[];
  return { dimensions: { route: route!, keyId: keyId!, team: team!, provider: provider!, model: model! }, metric: metric as AggregateMetric, value: exactSum(sum) };
}

/** A sum as a number while that is exact, else as a BigInt. */
export function exactSum(sum: string | number | bigint): number | bigint {
  const value = Number(sum);
  // A number past 2^53 has already lost its digits: nothing to win back from it.
  return Number.isSafeInteger(value) || typeof sum === "number" ? value : BigInt(sum);
}
