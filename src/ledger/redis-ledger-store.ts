import type { Redis } from "ioredis";
import type { CostRecord } from "../metering/cost-record.ts";
import { aggregateIncrements, dimensionsOf, recordDay, type AggregateDimensions, type AggregateMetric } from "./ledger-store.ts";

// The ledger in Redis. Each record and the aggregates it feeds are written by one Lua script, so
// they land together or not at all, and the script writes nothing when the record's key already
// exists: a retried write never counts twice. A whole batch goes in one pipeline, one round trip.
//
// Key layout (all keys of a day share the hash tag `{tollgate:YYYY-MM-DD}`, so one script only
// touches one Redis Cluster slot):
//   <prefix>{tollgate:DAY}:record:<requestId>   string  the record as JSON
//   <prefix>{tollgate:DAY}:records              list    request ids in the order they were written
//   <prefix>{tollgate:DAY}:totals               hash    field JSON [route, keyId, team, provider, model, metric] → integer

const RECORD_SCRIPT = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
for i = 3, #ARGV, 2 do redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1
`;

type RecordCommand = { tollgateRecordCost(record: string, list: string, totals: string, ...args: string[]): Promise<number> };

export class RedisLedgerStore {
  constructor(
    private readonly redis: Redis,
    /** Prepended to every key, e.g. to keep two deployments apart on one Redis. */
    private readonly prefix = "",
  ) {
    redis.defineCommand("tollgateRecordCost", { numberOfKeys: 3, lua: RECORD_SCRIPT });
  }

  keysFor(day: string) {
    const base = `${this.prefix}{tollgate:${day}}`;
    return { record: (requestId: string) => `${base}:record:${requestId}`, records: `${base}:records`, totals: `${base}:totals` };
  }

  async write(records: readonly CostRecord[]): Promise<void> {
    const pipeline = this.redis.pipeline() as unknown as ReturnType<Redis["pipeline"]> & RecordCommand;
    for (const record of records) {
      const keys = this.keysFor(recordDay(record));
      const fieldOf = totalsFields(dimensionsOf(record));
      const args = aggregateIncrements(record).flatMap(([metric, value]) => [fieldOf(metric), String(value)]);
      void pipeline.tollgateRecordCost(keys.record(record.requestId), keys.records, keys.totals, JSON.stringify(record), record.requestId, ...args);
    }
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  /** A day's aggregates, for reports and tests. */
  async totals(day: string): Promise<{ dimensions: AggregateDimensions; metric: AggregateMetric; value: number }[]> {
    const hash = await this.redis.hgetall(this.keysFor(day).totals);
    return Object.entries(hash).map(([field, value]) => {
      const [route, keyId, team, provider, model, metric] = JSON.parse(field) as string[];
      return { dimensions: { route: route!, keyId: keyId!, team: team!, provider: provider!, model: model! }, metric: metric as AggregateMetric, value: Number(value) };
    });
  }

  /** A day's records in the order they were written. */
  async records(day: string): Promise<CostRecord[]> {
    const keys = this.keysFor(day);
    const ids = await this.redis.lrange(keys.records, 0, -1);
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map((id) => keys.record(id)));
    return texts.flatMap((text) => (text ? [JSON.parse(text) as CostRecord] : []));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/** The hash field of each metric: the JSON array [route, keyId, team, provider, model, metric]. */
function totalsFields(dimensions: AggregateDimensions): (metric: AggregateMetric) => string {
  // The dimensions are serialized once per record, not once per metric.
  const head = JSON.stringify([dimensions.route, dimensions.keyId, dimensions.team, dimensions.provider, dimensions.model]).slice(0, -1);
  return (metric) => `${head},${JSON.stringify(metric)}]`;
}
