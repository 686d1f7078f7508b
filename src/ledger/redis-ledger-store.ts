import type { RedisClient } from "../store/redis-connection.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { aggregateEntry, aggregateIncrements, dimensionsOf, recordDay, totalsFields, unaddableReason, UnwritableRecords, type AggregateEntry, type LedgerStore } from "./ledger-store.ts";

// The ledger in Redis. Each record and the aggregates it feeds are written by the same Lua script
// call, and the script writes nothing for a record whose key already exists: a retried write never
// counts twice. A batch of records is one script call, one round trip.
//
// Key layout (all keys of a day share the hash tag `{tollgate:YYYY-MM-DD}`, so one script only
// touches one Redis Cluster slot):
//   <prefix>{tollgate:DAY}:record:<requestId>   string  the record as JSON
//   <prefix>{tollgate:DAY}:records              list    request ids in the order they were written
//   <prefix>{tollgate:DAY}:totals               hash    field JSON [route, keyId, team, provider, model, metric] → integer

// Writes a batch of one day's records.
// KEYS: records list, totals, then each record's key.
// ARGV: per record: the record's JSON, its request id, k, then k pairs of totals field and increment.
// Each record is all or nothing: write() sends only records whose increments are exact integers
// (unaddableReason), which HINCRBY always takes. One it refused half-way would leave the record's
// key, and every retry would skip the record with part of its sums missing.
const RECORD_SCRIPT = `
local written, a = 0, 1
for r = 3, #KEYS do
  local count = tonumber(ARGV[a + 2])
  if redis.call('SET', KEYS[r], ARGV[a], 'NX') then
    redis.call('RPUSH', KEYS[1], ARGV[a + 1])
    for i = a + 3, a + 2 + 2 * count, 2 do redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1]) end
    written = written + 1
  end
  a = a + 3 + 2 * count
end
return written
`;

/** Records per script call: one call holds Redis for its whole batch. */
const MAX_SCRIPT_BATCH = 64;

type RecordCommand = { tollgateRecordCosts(keyCount: number, ...keysAndArgs: string[]): Promise<number> };

export class RedisLedgerStore implements LedgerStore {
  constructor(
    private readonly redis: RedisClient,
    /** Prepended to every key, e.g. to keep two deployments apart on one Redis. */
    private readonly prefix = "",
  ) {
    redis.defineCommand("tollgateRecordCosts", { lua: RECORD_SCRIPT });
  }

  keysFor(day: string) {
    const base = `${this.prefix}{tollgate:${day}}`;
    return { record: (requestId: string) => `${base}:record:${requestId}`, records: `${base}:records`, totals: `${base}:totals` };
  }

  async write(records: readonly CostRecord[]): Promise<void> {
    const redis = this.redis as unknown as RecordCommand;
    const unwritable: { record: CostRecord; reason: string }[] = [];
    const writable: { record: CostRecord; increments: ReturnType<typeof aggregateIncrements> }[] = [];
    for (const record of records) {
      const increments = aggregateIncrements(record);
      const reason = unaddableReason(increments);
      if (reason) unwritable.push({ record, reason });
      else writable.push({ record, increments });
    }
    const calls: Promise<number>[] = [];
    for (const [day, ofDay] of groupBy(writable, ({ record }) => recordDay(record))) {
      const keys = this.keysFor(day);
      for (let at = 0; at < ofDay.length; at += MAX_SCRIPT_BATCH) {
        const batch = ofDay.slice(at, at + MAX_SCRIPT_BATCH);
        const args: string[] = [];
        for (const { record, increments } of batch) {
          const fieldOf = totalsFields(dimensionsOf(record));
          args.push(JSON.stringify(record), record.requestId, String(increments.length));
          for (const [metric, value] of increments) args.push(fieldOf(metric), String(value));
        }
        calls.push(redis.tollgateRecordCosts(2 + batch.length, keys.records, keys.totals, ...batch.map(({ record }) => keys.record(record.requestId)), ...args));
      }
    }
    // Every call is awaited before a failure is reported, so a retry never overlaps one in flight.
    const failed = (await Promise.allSettled(calls)).find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    if (unwritable.length > 0) throw new UnwritableRecords(unwritable);
  }

  /** A day's aggregates, for reports and tests: one HGETALL. */
  async totals(day: string): Promise<AggregateEntry[]> {
    const hash = await this.redis.hgetall(this.keysFor(day).totals);
    return Object.entries(hash).map(([field, value]) => aggregateEntry(field, value));
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
    // QUIT cannot be sent while Redis is away (no offline queue): the client would go on
    // reconnecting for ever, holding the process open. Cut it instead.
    await this.redis.quit().catch(() => undefined);
    if (this.redis.status !== "end") this.redis.disconnect();
  }
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
