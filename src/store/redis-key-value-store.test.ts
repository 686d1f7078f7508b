import { describe, expect, it } from "vitest";
import { useRedis } from "../../test/support/use-redis.ts";
import { RedisKeyValueStore } from "./redis-key-value-store.ts";

describe("RedisKeyValueStore (real redis-server)", () => {
  const rig = useRedis("kv");

  it("counts sightings across instances (two stores, one Redis) and slides the TTL", async () => {
    const { redis, prefix } = rig;
    const one = new RedisKeyValueStore(redis, prefix);
    const two = new RedisKeyValueStore(redis, prefix);
    expect(await one.countSightings(["prefix:a", "prefix:b"], 300)).toEqual([1, 1]);
    expect(await two.countSightings(["prefix:a"], 300)).toEqual([2]);
    expect(await redis.ttl(`${prefix}tollgate:kv:prefix:a`)).toBeGreaterThan(290);
  });

  it("keeps values for their TTL", async () => {
    const { redis, prefix } = rig;
    const store = new RedisKeyValueStore(redis, prefix);
    await store.set("answer:x", '{"a":1}', 60);
    expect(await store.get("answer:x")).toBe('{"a":1}');
    expect(await store.get("answer:missing")).toBeUndefined();
    const ttl = await redis.ttl(`${prefix}tollgate:kv:answer:x`);
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
  });
});
