// GET /healthz while the shared Redis is down. It used to answer exactly what it answers when all
// is well, while budgeted routes answered 503 and every cost record piled up in memory: a
// platform team's monitors could not tell the two apart. It stays a liveness answer (200: a
// restart would not bring Redis back), and says `degraded` with the records waiting.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startRestartableRedis, uniquePrefix, type RestartableRedis } from "./support/redis-server.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { APP_KEY, ANTHROPIC_KEY, OPENAI_KEY, temporaryLedgerPath, testConfig } from "./support/gateway.ts";

let redis: RestartableRedis;
let mocks: MockProviders;
let gateway: RunningGateway;

beforeAll(async () => {
  redis = await startRestartableRedis();
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startGateway({
    config: {
      ...base,
      routes: { ...base.routes, budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 100, window: "total" } } },
      store: { redisUrl: { env: "REDIS_URL" }, keyPrefix: uniquePrefix("healthz-outage"), path: temporaryLedgerPath() },
    },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: redis.url },
    log: () => {},
  });
});
afterAll(async () => {
  await gateway?.close({ drainMs: 100 }).catch(() => undefined);
  mocks?.close();
  await redis?.stop();
});

const chat = (model: string) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });

describe("GET /healthz with Redis unreachable", () => {
  it("stays 200 (liveness) but says degraded, with the records waiting, and ok again once they are written", async () => {
    expect((await chat("budgeted")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await (await fetch(`${gateway.url}/healthz`)).json()).toMatchObject({ status: "ok", ledger: { writes: "ok", pendingRecords: 0 } });

    await redis.crash();
    // Budgeted requests are refused; an unbudgeted one is served and its record cannot be written.
    expect((await chat("budgeted")).status).toBe(503);
    expect((await chat("gpt")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const response = await fetch(`${gateway.url}/healthz`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; ledger: { writes: string; pendingRecords: number } };
    expect(body.status).toBe("degraded");
    expect(body.ledger.writes).toBe("failing");
    expect(body.ledger.pendingRecords).toBeGreaterThan(0);
    expect(body).toMatchObject({ budgets: { store: "unreachable" } });

    // Once Redis is back, the ledger's next retry writes them.
    await redis.restart();
    await vi.waitFor(
      async () => {
        await gateway.ledger.flush();
        expect(await (await fetch(`${gateway.url}/healthz`)).json()).toMatchObject({ ledger: { writes: "ok", pendingRecords: 0 } });
      },
      { timeout: 15_000, interval: 200 },
    );
  }, 30_000);

  it("says degraded while the budget store is unreachable, also when no record waits (every route budgeted)", async () => {
    // Was: `ok`, since only the ledger's writes were looked at, and a refused request leaves no record.
    await redis.crash();
    expect((await chat("budgeted")).status).toBe(503);
    expect(await (await fetch(`${gateway.url}/healthz`)).json()).toMatchObject({ status: "degraded", budgets: { store: "unreachable" } });
    await redis.restart();
    await vi.waitFor(
      async () => {
        expect((await chat("budgeted")).status).toBe(200);
        expect(await (await fetch(`${gateway.url}/healthz`)).json()).toMatchObject({ budgets: { store: "ok" } });
      },
      { timeout: 15_000, interval: 300 },
    );
  }, 30_000);
});
