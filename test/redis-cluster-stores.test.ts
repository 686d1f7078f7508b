// The three Redis stores on a real three-master Redis Cluster, through the client the gateway
// opens with `"cluster": true`. Each test first checks that its keys really do sit on different
// nodes, so that a store which only works when every key shares one node would fail here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "ioredis";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import { RedisAdmissionStore } from "../src/budgets/redis-admission-store.ts";
import { RedisKeyValueStore } from "../src/store/redis-key-value-store.ts";
import { connectRedis } from "../src/store/redis-connection.ts";
import { makeCostRecord } from "./support/cost-records.ts";
import { startRedisCluster, type RedisClusterHandle } from "./support/redis-cluster.ts";
import { uniquePrefix } from "./support/redis-server.ts";

describe("the Redis stores on a Redis Cluster", () => {
  let cluster: RedisClusterHandle;
  let redis: Cluster;
  const prefix = uniquePrefix("cluster");

  beforeAll(async () => {
    cluster = await startRedisCluster();
    redis = connectRedis(cluster.url, true, { commandTimeoutMs: 2_000 }) as Cluster;
    await new Promise<void>((resolve, reject) => {
      redis.once("ready", () => resolve());
      redis.once("error", reject);
    });
  }, 30_000);

  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it("the ledger writes and reads back days that live on different nodes", async () => {
    const store = new RedisLedgerStore(redis, prefix);
    const days = ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"];
    const nodes = new Set(await Promise.all(days.map((day) => cluster.nodeFor(store.keysFor(day).totals))));
    expect(nodes.size).toBeGreaterThan(1);

    // Two records a day, written in one batch that spans every day (one script call per day).
    const records = days.flatMap((day, index) => [
      makeCostRecord({ requestId: `req_${day}_a`, time: `${day}T08:00:00.000Z`, usage: { ...makeCostRecord().usage, outputTokens: 10 + index } }),
      makeCostRecord({ requestId: `req_${day}_b`, time: `${day}T20:00:00.000Z`, model: "gpt-4o-mini" }),
    ]);
    await store.write(records);
    await store.write(records.slice(0, 3)); // a retried write counts nothing twice

    for (const [index, day] of days.entries()) {
      expect((await store.records(day)).map((record) => record.requestId)).toEqual([`req_${day}_a`, `req_${day}_b`]);
      const totals = await store.totals(day);
      const sum = (model: string, metric: string) =>
        totals.filter((entry) => entry.dimensions.model === model && entry.metric === metric).reduce((total: number, entry) => total + Number(entry.value), 0);
      expect(sum("gpt-4o", "requests")).toBe(1);
      expect(sum("gpt-4o", "output_tokens")).toBe(10 + index);
      expect(sum("gpt-4o-mini", "output_tokens")).toBe(42);
      expect(sum("gpt-4o", "cost_nano")).toBe(2_140_000);
    }
  });

  it("the key-value store counts sightings of keys on different nodes in one call", async () => {
    const store = new RedisKeyValueStore(redis, prefix);
    const keys = ["prefix-a", "prefix-b", "prefix-c", "prefix-d", "prefix-e", "prefix-f"];
    const nodes = new Set(await Promise.all(keys.map((key) => cluster.nodeFor(`${prefix}tollgate:kv:${key}`))));
    expect(nodes.size).toBeGreaterThan(1);

    expect(await store.countSightings(keys, 300)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await store.countSightings(keys.slice(2), 300)).toEqual([2, 2, 2, 2]);
    expect(await redis.ttl(`${prefix}tollgate:kv:prefix-f`)).toBeGreaterThan(290);

    await store.set("answer", "42", 60);
    expect(await store.get("answer")).toBe("42");
    expect(await store.get("missing")).toBeUndefined();
  });

  it("after a slot moves to another node (resharding), sightings and a day's totals are still read and written", async () => {
    const store = new RedisKeyValueStore(redis, prefix);
    const ledger = new RedisLedgerStore(redis, prefix);
    const owner = cluster.nodeUrls[0]!;
    // Two sighting keys and two days on the first node, each in a slot of its own.
    const onFirstNode = async (candidates: string[], keyOf: (candidate: string) => string) => {
      const found: string[] = [];
      for (const candidate of candidates) if ((await cluster.nodeFor(keyOf(candidate))) === owner && found.length < 2) found.push(candidate);
      return found;
    };
    const keys = await onFirstNode(Array.from({ length: 40 }, (_, index) => `moved-${index}`), (key) => `${prefix}tollgate:kv:${key}`);
    const days = await onFirstNode(Array.from({ length: 28 }, (_, index) => `2026-02-${String(index + 1).padStart(2, "0")}`), (day) => ledger.keysFor(day).totals);
    expect([keys.length, days.length]).toEqual([2, 2]);
    expect(await store.countSightings(keys, 300)).toEqual([1, 1]);
    await ledger.write([makeCostRecord({ requestId: "req_before_move", time: `${days[0]}T09:00:00.000Z` })]);

    // The client still holds the old slot map when the slots move.
    await redis.del(`${prefix}tollgate:kv:${keys[1]}`);
    await cluster.moveSlot(await cluster.slotOf(`${prefix}tollgate:kv:${keys[1]}`), 1);
    await cluster.moveSlot(await cluster.slotOf(ledger.keysFor(days[1]!).totals), 2);

    expect(await store.countSightings(keys, 300)).toEqual([2, 1]);
    await ledger.write([makeCostRecord({ requestId: "req_after_move", time: `${days[1]}T09:00:00.000Z` })]);
    const totals = await Promise.all(days.map((day) => ledger.totals(day)));
    expect(totals.map((entries) => entries.find((entry) => entry.metric === "requests")?.value)).toEqual([1, 1]);
  });

  it("budgets: admit, settle, renew and read levels across scopes, all in one slot", async () => {
    const store = new RedisAdmissionStore(redis, prefix);
    const now = Date.UTC(2026, 10, 24, 12);
    const scopes = [
      { scope: "route:support", key: "route:support|day:2026-11-24", limitNano: 1_000_000, mode: "hard" as const, windowEndsAt: Date.UTC(2026, 10, 25) },
      { scope: "key:app", key: "key:app|total", limitNano: 5_000_000, mode: "hard" as const, windowEndsAt: 0 },
    ];
    const plan = (requestId: string, amountNano: number) => ({
      requestId,
      now,
      reservationExpiresAt: now + 60_000,
      amountNano,
      scopes,
      rates: [{ scope: "key:app", rpm: 2 }],
      tokens: 100,
    });

    // An admission reports each scope's level before its own reservation.
    const first = await store.admit(plan("req_1", 600_000));
    expect(first).toMatchObject({ admitted: true, levels: [{ spentNano: 0, reservedNano: 0 }, { spentNano: 0, reservedNano: 0 }] });
    // The route's day budget has 400,000 left: a second 600,000 is refused, naming that scope.
    expect(await store.admit(plan("req_2", 600_000))).toMatchObject({
      admitted: false,
      reason: "budget",
      scope: { scope: "route:support" },
      level: { spentNano: 0, reservedNano: 600_000 },
    });

    await store.extend(["req_1"], now + 120_000);
    expect(await redis.zscore(`${prefix}{tollgate:budgets}:expiries`, "req_1")).toBe(String(now + 120_000));

    await store.settle({ requestId: "req_1", now: now + 1_000, scopeKeys: scopes.map((scope) => scope.key), actualNano: 250_000, tokens: 80, rateScopes: ["key:app"], admittedAt: now, reservedTokens: 100 });
    expect(await store.levels(scopes.map((scope) => scope.key), now + 1_000)).toEqual([
      { spentNano: 250_000, reservedNano: 0 },
      { spentNano: 250_000, reservedNano: 0 },
    ]);
    // A refused admission writes nothing, so this minute has seen one request of the 2 allowed.
    expect(await store.admit(plan("req_3", 100_000))).toMatchObject({ admitted: true });
    expect(await store.admit(plan("req_4", 100_000))).toMatchObject({ admitted: false, reason: "rate", kind: "rpm" });
  });
});
