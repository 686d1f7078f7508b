import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "./support/redis-server.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { APP_KEY, ANTHROPIC_KEY, OPENAI_KEY, testConfig } from "./support/gateway.ts";

// A Redis that is alive but does not answer (a stalled primary, a failover in progress, a network
// partition that drops packets): admission fails after the client's commandTimeout with its own
// "budget_store_unavailable" 503. Used to be wrong: open-stores.ts built the client with no commandTimeout,
// so admission's script call waits for ever and the client's request hangs. The contract: a clear
// error in the client's dialect (the admission's own "budget_store_unavailable" 503), never a hang.

let redis: RedisHandle;
let mocks: MockProviders;
let gateway: RunningGateway;

beforeAll(async () => {
  redis = await startRedis({ privateServer: true });
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startGateway({
    config: {
      ...base,
      routes: { ...base.routes, limited: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { rpm: 1000 } } },
      store: { redisUrl: { env: "REDIS_URL" }, keyPrefix: uniquePrefix("review-stalled") },
    },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, REDIS_URL: redis.url },
    log: () => {},
  });
  // Warm: the connection is up and the scripts are loaded.
  const warm = await post("/v1/chat/completions", { model: "limited", messages: [{ role: "user", content: "hi" }] });
  expect(warm.status).toBe(200);
});

afterAll(async () => {
  if (redis?.pid) process.kill(redis.pid, "SIGCONT");
  await gateway?.close({ drainMs: 100 }).catch(() => undefined);
  mocks?.close();
  await redis?.stop();
});

function post(path: string, body: unknown, signal?: AbortSignal) {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

describe("a stalled Redis (alive, not answering)", () => {
  it("a rate-limited request gets a 503 in its dialect within seconds, not a hang", async () => {
    process.kill(redis.pid!, "SIGSTOP");
    try {
      const started = Date.now();
      const outcome = await post("/v1/chat/completions", { model: "limited", messages: [{ role: "user", content: "hi" }] }, AbortSignal.timeout(10_000)).then(
        async (response) => ({ status: response.status, body: await response.json() }),
        (error: Error) => ({ status: 0, body: { hung: `${error.name} after ${Date.now() - started} ms` } }),
      );
      expect(outcome).toMatchObject({ status: 503, body: { error: { code: "budget_store_unavailable" } } });
    } finally {
      process.kill(redis.pid!, "SIGCONT");
    }
  }, 20_000);
});
