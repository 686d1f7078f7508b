// A request finishes during a Redis outage: its settle waits in its retry backoff. Redis comes
// back and the gateway is stopped before the next attempt: close() makes the settle then (or, if
// Redis is still away, keeps it for the next start), so the budget is charged.
// Used to be wrong: close() wrote the ledger but never the pending settles; the budget was never
// charged, the reservation was swept at its TTL, and the money spent was spendable again.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Redis } from "ioredis";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startRestartableRedis, uniquePrefix, type RestartableRedis } from "./support/redis-server.ts";
import { startGateway } from "../src/node/serve.ts";
import { RedisAdmissionStore } from "../src/budgets/redis-admission-store.ts";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import { ANTHROPIC_KEY, OPENAI_KEY } from "./support/gateway.ts";
import { budgetedOnRedis, streamWhileRedisCrashes } from "./support/redis-outage.ts";

let redis: RestartableRedis;
let dir = "";
let mocks: MockProviders;
const prefix = uniquePrefix("review-settle-lost");


beforeAll(async () => {
  redis = await startRestartableRedis({ persist: true });
  dir = mkdtempSync(join(tmpdir(), "tollgate-kept-"));
  mocks = startMockProviders();
});
afterAll(async () => {
  mocks?.close();
  await redis?.stop();
});

it("a request settled nowhere before shutdown is still charged to its budget", async () => {
  const gateway = await startGateway({
    config: budgetedOnRedis(prefix, dir),
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: redis.url },
    log: () => {},
  });
  const client = (gateway.admissionStore as unknown as { redis: Redis }).redis;
  const requestId = await streamWhileRedisCrashes(gateway.url, mocks, redis, 4);
  // The settle fails and backs off (100, 200, 400, 800 ms…); Redis is back, with its data.
  await new Promise((r) => setTimeout(r, 1000));
  await redis.restart();
  for (let i = 0; i < 100 && client.status !== "ready"; i++) await new Promise((r) => setTimeout(r, 50));
  expect(client.status).toBe("ready");
  await gateway.close({ drainMs: 100 });

  const reader = new Redis(redis.url);
  const day = new Date().toISOString().slice(0, 10);
  const recorded = (await new RedisLedgerStore(reader, prefix).records(day)).some((record) => record.requestId === requestId);
  // Long after the old process is gone (its reservation swept), what does the budget hold?
  const [level] = await new RedisAdmissionStore(reader, prefix).levels(["route:budgeted|total"], Date.now() + 10 * 60_000);
  reader.disconnect();
  expect(recorded).toBe(true);
  // gpt-4o, 1000 in × $2.50/M + 1000 out × $10/M = $0.0125, spent.
  expect(level).toEqual({ spentNano: 12_500_000, reservedNano: 0 });
}, 60_000);
