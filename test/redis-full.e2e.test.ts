import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { ANTHROPIC_KEY, OPENAI_KEY, postJson, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { findFreePort, startRedisOn, type RedisHandle } from "./support/redis-server.ts";

// A Redis run as docs/budgets.md says (maxmemory-policy noeviction) that has filled up refuses
// every write: "OOM command not allowed when used memory > 'maxmemory'". Budgeted requests fail
// closed, as they must. Was: told "the budget store is unreachable", in the 503 and in /healthz,
// which sent operators to the network; it is reached, and full.

let server: RedisHandle;
let filler: Redis;
let mocks: MockProviders;
let gateway: RunningGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  server = await startRedisOn(await findFreePort(), { extraArgs: ["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"] });
  filler = new Redis(server.url);
  const base = testConfig();
  gateway = await startGateway({
    config: {
      ...base,
      routes: { ...base.routes, budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 10, window: "total" } } },
      store: { redisUrl: { env: "R" }, path: temporaryLedgerPath() },
    },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, R: server.url },
    log: () => {},
  });
});
afterAll(async () => {
  await gateway?.close({ drainMs: 100 });
  filler?.disconnect();
  await server?.stop();
  mocks?.close();
});

describe("a Redis that is full under noeviction", () => {
  it("budgeted requests get a 503 saying the budget store is full, and /healthz says full", async () => {
    // Fill it with keys of its own until it refuses.
    for (let index = 0; ; index++) {
      const refused = await filler.set(`filler:${index}`, "x".repeat(10_000)).then(() => false, (error: Error) => error.message.startsWith("OOM"));
      if (refused) break;
    }
    const response = await postJson(gateway, "/v1/chat/completions", { model: "budgeted", max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] });
    expect(response.status).toBe(503);
    expect((await response.json()).error).toMatchObject({
      code: "budget_store_unavailable",
      message: "the budget store is full (Redis refuses writes past its maxmemory); requests on budgeted or rate-limited routes are refused until it is given room",
    });
    const health = await (await fetch(`${gateway.url}/healthz`)).json();
    expect({ status: health.status, budgets: health.budgets }).toEqual({ status: "degraded", budgets: { store: "full" } });
  });
});
