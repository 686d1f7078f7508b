import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import type { CostRecord } from "../src/metering/cost-record.ts";
import type { RunningGateway } from "../src/node/serve.ts";
import { APP_KEY, ADMIN_KEY, ledgerRecords, LIMITED_KEY, startTestGateway, testConfig, waitForRecord, type TestGateway, startGatewaysOnRedis } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { useRedis } from "./support/use-redis.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";

// Budgets and rate limits under real concurrency, through running gateways. The upstream is the
// msw OpenAI stand-in: a request "Hello there" costs 2 prompt + 4 completion tokens on gpt-4o,
// 2 × 2500 + 4 × 10,000 = 45,000 nano-dollars; its worst case with max_tokens 20 is
// 27 bytes × 2500 + 20 × 10,000 = 267,500 nano-dollars, so a $0.002 budget fits 7 in flight.

const BUDGET_NANO = 2_000_000;
const today = () => new Date().toISOString().slice(0, 10);

function budgetConfig() {
  const base = testConfig();
  return {
    ...base,
    routes: {
      ...base.routes,
      budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: BUDGET_NANO / 1e9, window: "day" } },
      soft: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.0003, window: "day", mode: "soft" } },
      throttled: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { rpm: 10 } },
      // Below one answer's 6 tokens: the first request is admitted, the next refused.
      tokenThrottled: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 5 } },
    },
    teams: { search: { budget: { usd: 5, window: "month" } } },
  };
}

let mocks: MockProviders;

// This file reads today's keys on the real clock: keep its run inside one UTC day.
beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);

beforeAll(() => {
  mocks = startMockProviders();
});
afterAll(() => mocks?.close());

function ask(gateway: RunningGateway, route: string, key = APP_KEY) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: route, max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] }),
  });
}

/** Waits until no reservation is left on the scope, then returns its level. */
async function settledLevel(gateway: RunningGateway, scopeKey: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [level] = await gateway.admissionStore.levels([scopeKey], Date.now());
    if (level!.reservedNano === 0 || Date.now() > deadline) return level!;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function fire(gateways: RunningGateway[], count: number, route: string) {
  const responses = await Promise.all(Array.from({ length: count }, (_, index) => ask(gateways[index % gateways.length]!, route)));
  const bodies = await Promise.all(responses.map((response) => response.json() as Promise<{ error?: { code?: string } }>));
  return responses.map((response, index) => ({ status: response.status, body: bodies[index]!, requestId: response.headers.get("x-tollgate-request-id")! }));
}

describe("one gateway, embedded store", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(budgetConfig());
  });
  afterAll(async () => gateway?.close());

  it("200 concurrent requests never overspend: every refusal is a 402, and spend settles to exactly the records' total", async () => {
    const results = await fire([gateway], 200, "budgeted");
    const served = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status !== 200);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((result) => result.status))).toEqual(new Set([402]));
    expect(refused.every((result) => result.body.error?.code === "budget_exceeded")).toBe(true);

    const records = await Promise.all(served.map((result) => waitForRecord(gateway, result.requestId)));
    const recorded = records.reduce((sum, record) => sum + record.cost.totalNano, 0);
    expect(recorded).toBe(served.length * 45_000);
    const level = await settledLevel(gateway, `route:budgeted|${today()}`);
    expect(level).toEqual({ spentNano: recorded, reservedNano: 0 });
    expect(level.spentNano).toBeLessThanOrEqual(BUDGET_NANO);
    // Refused requests left no record.
    expect((await ledgerRecords(gateway)).filter((record) => refused.some((result) => result.requestId === record.requestId))).toEqual([]);
  });

  it("rate limits hold under concurrency: 30 at once against 10 per minute, the rest 429 with retry-after in each dialect", async () => {
    const responses = await Promise.all(Array.from({ length: 30 }, () => ask(gateway, "throttled")));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    const limited = responses.find((response) => response.status === 429)!;
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // As OpenAI's own 429 on requests per minute. Was: Anthropic's type, "rate_limit_error".
    expect(await limited.json()).toMatchObject({ error: { type: "requests", code: "rate_limit_exceeded", param: null } });

    const anthropic = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: "throttled", max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] }),
    });
    expect(anthropic.status).toBe(429);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

  it("a tpm refusal says type \"tokens\" in the OpenAI dialect, as OpenAI's 429 on tokens per minute does; rate_limit_error in Anthropic's", async () => {
    const first = await ask(gateway, "tokenThrottled");
    expect(first.status).toBe(200);
    await first.text();
    const second = await ask(gateway, "tokenThrottled");
    expect(second.status).toBe(429);
    expect(await second.json()).toEqual({
      error: { message: expect.stringMatching(/^rate limit of 5 tokens per minute reached for route:tokenThrottled; retry after \d+ s$/), type: "tokens", param: null, code: "rate_limit_exceeded" },
    });
    const anthropic = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: "tokenThrottled", max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] }),
    });
    expect(anthropic.status).toBe(429);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

    it("a soft budget serves past its limit, flags the record and says so; answers carry the budget left", async () => {
    const first = await ask(gateway, "soft");
    expect(first.status).toBe(200);
    // $0.0003 − 45,000 nano spent by this request (no other spend in flight) = 255,000 nano.
    expect(first.headers.get("x-tollgate-budget-remaining-usd")).toBe("0.000255");
    const second = await ask(gateway, "soft"); // worst case 267,500 > 255,000 left
    expect(second.status).toBe(200);
    const record = await waitForRecord(gateway, second.headers.get("x-tollgate-request-id")!);
    expect(record.softBudgetsExceeded).toEqual(["route:soft"]);
    expect(record.warnings.join()).toContain("soft budget route:soft had not enough left for this request's worst case (a hard budget would have refused it); served anyway");
  });

  it("GET /v1/budgets shows the caller's scopes; the admin sees all", async () => {
    const mine = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    const { scopes } = (await mine.json()) as { scopes: Record<string, unknown>[] };
    expect(scopes.map((scope) => scope.scope)).toEqual(["route:budgeted", "route:soft", "team:search"]);
    expect(scopes[0]).toMatchObject({ limitUsd: 0.002, reservedUsd: 0, window: "day", mode: "hard", resetsAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/) });
    // The figures are the store's, in whole nano-dollars: nothing is in flight, so what is left is
    // the limit less what was spent.
    const { spentNano } = await settledLevel(gateway, `route:budgeted|${today()}`);
    const first = scopes[0] as { limitUsd: number; spentUsd: number; reservedUsd: number; remainingUsd: number };
    expect([first.limitUsd, first.spentUsd, first.reservedUsd, first.remainingUsd].map((usd) => Math.round(usd * 1e9))).toEqual([BUDGET_NANO, spentNano, 0, BUDGET_NANO - spentNano]);

    // The limited key may use only "gpt", which has no budget; its team has none either.
    const limited = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${LIMITED_KEY}` } });
    expect(await limited.json()).toEqual({ scopes: [] });
    const admin = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(((await admin.json()) as { scopes: { scope: string }[] }).scopes.map((scope) => scope.scope)).toEqual(["route:budgeted", "route:soft", "team:search"]);
  });
});

describe("the embedded store across a restart", () => {
  it("keeps what was spent: the budget is rebuilt from the ledger file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tollgate-budget-restart-"));
    const config = { ...budgetConfig(), store: { path: join(dir, "ledger.jsonl") } };
    const first = await startTestGateway(config);
    const served = await fire([first], 3, "budgeted");
    expect(served.map((result) => result.status)).toEqual([200, 200, 200]);
    await settledLevel(first, `route:budgeted|${today()}`);
    await first.close(); // flushes the ledger, and leaves its checkpoint
    const checkpoint = JSON.parse(await readFile(join(dir, "ledger.jsonl.checkpoint"), "utf8")) as { size: number; records: number };
    expect(checkpoint).toMatchObject({ size: (await stat(join(dir, "ledger.jsonl"))).size, records: 3 });

    // Through the checkpoint, and (without it) from the whole file: the same spend.
    for (const how of ["checkpoint", "whole file"]) {
      if (how === "whole file") await rm(join(dir, "ledger.jsonl.checkpoint"));
      const again = await startTestGateway(config);
      try {
        expect(await again.admissionStore.levels([`route:budgeted|${today()}`], Date.now())).toEqual([{ spentNano: 3 * 45_000, reservedNano: 0 }]);
      } finally {
        await again.close();
      }
    }
    await rm(dir, { recursive: true, force: true });
  });
});

describe("three gateways sharing one real Redis", () => {
  const rig = useRedis("budgets");
  const gateways: RunningGateway[] = [];
  beforeAll(async () => {
    gateways.push(...(await startGatewaysOnRedis(3, budgetConfig(), rig)));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
  });

  it("200 concurrent requests across the three never overspend, and settle to exactly the records' total", async () => {
    const results = await fire(gateways, 200, "budgeted");
    const served = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status !== 200);
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(refused.map((result) => result.status))).toEqual(new Set([402]));

    await Promise.all(gateways.map((gateway) => gateway.ledger.flush()));
    const ledger = new RedisLedgerStore(rig.redis, rig.prefix);
    let records: CostRecord[] = [];
    for (let attempt = 0; attempt < 100 && records.length < served.length; attempt++) {
      records = (await ledger.records(today())).filter((record) => record.route === "budgeted");
      if (records.length < served.length) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(records.map((record) => record.requestId).sort()).toEqual(served.map((result) => result.requestId).sort());
    const recorded = records.reduce((sum, record) => sum + record.cost.totalNano, 0);
    const level = await settledLevel(gateways[0]!, `route:budgeted|${today()}`);
    expect(level).toEqual({ spentNano: recorded, reservedNano: 0 });
    expect(level.spentNano).toBeLessThanOrEqual(BUDGET_NANO);
    // The key's team budget saw the same spend (only this route's requests ran under this prefix),
    // settled in the same script as the route's.
    const [team] = await gateways[1]!.admissionStore.levels([`team:search|${new Date().toISOString().slice(0, 7)}`], Date.now());
    expect(team).toEqual({ spentNano: recorded, reservedNano: 0 });
  });
});

