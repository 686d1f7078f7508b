import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../src/node/serve.ts";
import { findFreePort, startRedis, startRedisOn, type RedisHandle } from "./support/redis-server.ts";
import { until } from "./support/until.ts";
import { temporaryLedgerPath, testConfig } from "./support/gateway.ts";

// A Redis that evicts keys under memory pressure (maxmemory-policy allkeys-lru, volatile-lru, …)
// drops budget levels, which resets a budget's spend to $0, and cost records, which the ledger
// keeps adding: a review's test served 10 requests past an exhausted hard budget once Redis had
// evicted its level. Was: nothing said so. Now start-up warns, naming the policy and the fix.

let redis: RedisHandle;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis({ privateServer: true });
  admin = new Redis(redis.url);
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

async function startUpLines(): Promise<string[]> {
  const lines: string[] = [];
  const gateway = await startGateway({
    config: { ...testConfig(), store: { redisUrl: { env: "TEST_REDIS_URL" }, path: temporaryLedgerPath() } },
    port: 0,
    env: { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", TEST_REDIS_URL: redis.url },
    log: (line) => lines.push(line),
  });
  await gateway.close();
  return lines;
}

describe("a Redis whose maxmemory-policy may evict keys", () => {
  it("is named in a start-up warning with the fix", async () => {
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    const warning = (await startUpLines()).find((line) => line.includes("maxmemory-policy"));
    expect(warning).toBe(
      "[tollgate] warning: Redis may evict keys (maxmemory-policy allkeys-lru): an evicted budget level resets that budget's spend to $0, and an evicted cost record is lost to reports; set maxmemory-policy noeviction (docs/budgets.md, Stores)",
    );
  });

  it("noeviction: no warning", async () => {
    await admin.config("SET", "maxmemory-policy", "noeviction");
    expect((await startUpLines()).filter((line) => line.includes("maxmemory-policy"))).toEqual([]);
  });

  it("a Redis that comes up after the gateway is checked once it is reached", async () => {
    const port = await findFreePort();
    const lines: string[] = [];
    const gateway = await startGateway({
      config: { ...testConfig(), store: { redisUrl: { env: "TEST_REDIS_URL" }, path: temporaryLedgerPath() } },
      port: 0,
      env: { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", TEST_REDIS_URL: `redis://127.0.0.1:${port}` },
      log: (line) => lines.push(line),
    });
    const late = await startRedisOn(port, { extraArgs: ["--maxmemory-policy", "volatile-lru"] });
    try {
      await until(() => lines.some((line) => line.includes("maxmemory-policy volatile-lru")), "the eviction warning", 15_000);
    } finally {
      await gateway.close();
      await late.stop();
    }
  }, 40_000);
});
