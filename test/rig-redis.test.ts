// Checks the test rig itself: a real Redis that ioredis can use, including Lua scripts (the
// budget store relies on EVAL for atomic check-and-spend).
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Redis } from "ioredis";
import { startRedis, uniquePrefix, type RedisHandle } from "./support/redis-server.ts";

describe("rig: real Redis", () => {
  let server: RedisHandle;
  let redis: Redis;
  const prefix = uniquePrefix();

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });

  afterAll(async () => {
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    await server?.stop();
  });

  it("answers PING", async () => {
    expect(await redis.ping()).toBe("PONG");
  });

  it("stores and reads back a value", async () => {
    await redis.set(`${prefix}greeting`, "hello", "EX", 60);
    expect(await redis.get(`${prefix}greeting`)).toBe("hello");
    expect(await redis.get(`${prefix}missing`)).toBeNull();
  });

  it("runs a Lua script atomically (EVAL)", async () => {
    // Spend from a budget only if enough is left: the shape of the gateway's budget check.
    const spendIfAvailable = `
      local left = tonumber(redis.call("GET", KEYS[1]) or "0")
      local cost = tonumber(ARGV[1])
      if left < cost then return -1 end
      return redis.call("DECRBY", KEYS[1], cost)
    `;
    const budget = `${prefix}budget`;
    await redis.set(budget, "10");
    expect(await redis.eval(spendIfAvailable, 1, budget, "4")).toBe(6);
    expect(await redis.eval(spendIfAvailable, 1, budget, "4")).toBe(2);
    expect(await redis.eval(spendIfAvailable, 1, budget, "4")).toBe(-1);
    expect(await redis.get(budget)).toBe("2");
  });

  it("gives every caller a different key prefix", () => {
    expect(uniquePrefix()).not.toBe(uniquePrefix());
    expect(uniquePrefix("budget")).toMatch(/^budget:[0-9a-f]{12}:$/);
  });
});
