import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startRestartableRedis, uniquePrefix, type RestartableRedis } from "./support/redis-server.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { ANTHROPIC_KEY, APP_KEY, OPENAI_KEY } from "./support/gateway.ts";
import { budgetedOnRedis, streamWhileRedisCrashes } from "./support/redis-outage.ts";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";

// Redis is away (a restart, a failover) while a gateway instance is stopped (a deploy, a scale-in).
// The cost records it could not write in its 5 s are kept in a file beside the embedded ledger's,
// and its settle, still retrying, is kept the same way: the next gateway to start makes the settle
// and writes the records before it serves.
// Used to be wrong: Ledger.close() logged "N cost records could not be written before shutdown"
// and dropped them; a request that was served and billed had no record.

let redis: RestartableRedis;
let dir = "";
let mocks: MockProviders;
const gateways: RunningGateway[] = [];
const prefix = uniquePrefix("review-shutdown");
const logs: string[] = [];


const start = async (replayRetryMs?: number) => {
  const gateway = await startGateway({
    ...(replayRetryMs ? { replayRetryMs } : {}),
    config: budgetedOnRedis(prefix, dir),
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: redis.url },
    log: (line) => logs.push(line),
  });
  gateways.push(gateway);
  return gateway;
};

/** Whether the request's cost record is in Redis's ledger within 15 s. */
async function landsInRedis(requestId: string): Promise<boolean> {
  const reader = new Redis(redis.url);
  try {
    const ledger = new RedisLedgerStore(reader, prefix);
    const day = new Date().toISOString().slice(0, 10);
    for (let i = 0; i < 60; i++) {
      if ((await ledger.records(day)).some((record) => record.requestId === requestId)) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  } finally {
    reader.disconnect();
  }
}

beforeAll(async () => {
  redis = await startRestartableRedis({ persist: true });
  dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
  mocks = startMockProviders();
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.close({ drainMs: 100 }).catch(() => undefined);
  mocks?.close();
  await redis?.stop();
});

describe("a gateway stopped while Redis is away", () => {
  it("keeps the cost record of a request it served, and the next gateway writes it to Redis", async () => {
    const first = await start();
    // A stream that takes ~1.5 s: admitted (reserved in Redis) before the outage, finished during it.
    const requestId = await streamWhileRedisCrashes(first.url, mocks, redis, 5);
    // The deploy: this instance stops (with its usual 5 s for the ledger).
    await first.close({ drainMs: 1000 });
    // Redis is back with its data; the new instance starts.
    await redis.restart();
    const second = await start();
    expect(await landsInRedis(requestId)).toBe(true);
    const [level] = await second.admissionStore.levels(["route:budgeted|total"], Date.now());
    // Charged to the budget too, once: gpt-4o, 1000 in × $2.50/M + 1000 out × $10/M = $0.0125.
    expect(level).toEqual({ spentNano: 12_500_000, reservedNano: 0 });
    expect(logs.some((line) => line.includes("could not be written before shutdown; kept in"))).toBe(true);
    expect(logs.some((line) => line.includes("cost records kept while the store was away"))).toBe(true);
    // Written once: the kept file is gone.
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-"))).toEqual([]);
  }, 150_000);

  it("a gateway that starts while Redis is still away writes them once it is back, without a restart", async () => {
    // Was: tried at start-up only, and a pod started during the outage held them until its next restart.
    const first = await start();
    const requestId = await streamWhileRedisCrashes(first.url, mocks, redis, 5);
    await first.close({ drainMs: 1000 });
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-"))).toHaveLength(1);
    // Redis is still away: the new instance starts anyway, and keeps trying.
    const second = await start(300);
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-"))).toHaveLength(1);
    await redis.restart();
    expect(await landsInRedis(requestId)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-"))).toEqual([]);
    expect(logs.some((line) => line.includes("trying again later"))).toBe(true);
    await second.close({ drainMs: 100 });
  }, 150_000);
});

describe("a long Redis outage on a running gateway", () => {
  // Routes without budgets keep serving while Redis is away. Was: every record held in memory
  // until it came back (an out-of-memory kill of a busy gateway loses all of them). Past the
  // bound they are kept in files beside the embedded ledger's, and this gateway writes them to
  // Redis once it is back, without a restart.
  it("holds at most maxQueuedRecords in memory, and every record reaches Redis once it is back", async () => {
    const gateway = await startGateway({
      config: { ...budgetedOnRedis(prefix, dir), routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } } },
      port: 0,
      upstreamTransport: "fetch",
      env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: redis.url },
      log: (line) => logs.push(line),
      replayRetryMs: 300,
      maxQueuedRecords: 600,
    });
    gateways.push(gateway);
    await redis.crash();
    const ids: string[] = [];
    let mostPending = 0;
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(`${gateway.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "hi" }] }),
          }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        ids.push(answer.headers.get("x-tollgate-request-id")!);
        await answer.arrayBuffer();
      }
      mostPending = Math.max(mostPending, gateway.ledger.pending);
    }
    // 1,500 answered: at most the 600 held and, while a file is being written, the half of them on
    // their way to it (and a batch of 50 arriving meanwhile); the rest in files. Was: all 1,500.
    expect(mostPending).toBeLessThanOrEqual(950);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(gateway.ledger.pending).toBeLessThanOrEqual(600);
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-")).length).toBeGreaterThan(0);

    await redis.restart();
    const reader = new Redis(redis.url);
    try {
      const ledger = new RedisLedgerStore(reader, prefix);
      const day = new Date().toISOString().slice(0, 10);
      let landed = new Set<string>();
      for (let i = 0; i < 120 && landed.size < ids.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const written = new Set((await ledger.records(day)).map((record) => record.requestId));
        landed = new Set(ids.filter((id) => written.has(id)));
      }
      expect(landed.size).toBe(ids.length);
    } finally {
      reader.disconnect();
    }
    expect(readdirSync(dir).filter((name) => name.startsWith("unwritten-"))).toEqual([]);
    await gateway.close({ drainMs: 100 });
  }, 150_000);
});
