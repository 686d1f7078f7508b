import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import type { RunningGateway } from "../src/node/serve.ts";
import { ADMIN_KEY, APP_KEY, LIMITED_KEY, startGatewaysOnRedis, testConfig } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { useRedis } from "./support/use-redis.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

// GET /v1/admin/costs on two gateways sharing one real Redis: each serves part of the traffic
// through the official SDKs, and either one reports all of it, to the nano-dollar. Costs by hand
// from the bundled prices: gpt-4o 2500 / 1250 cached / 10,000 nano per token; Claude Sonnet 4.6
// 3000 in / 300 read / 3750 5m write / 6000 1h write / 15,000 out.

const rig = useRedis("cost-reports");
let mocks: MockProviders;
const gateways: RunningGateway[] = [];
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);
beforeAll(async () => {
  mocks = startMockProviders();
  gateways.push(...(await startGatewaysOnRedis(2, testConfig(), rig)));
});
afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  mocks?.close();
});

function report(gateway: RunningGateway, query: string, headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` }) {
  return fetch(`${gateway.url}/v1/admin/costs?${query}`, { headers });
}

describe("cost reports across two gateways on one Redis", () => {
  beforeAll(async () => {
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    // A: OpenAI SDK, 1200 in (1024 cached), 42 out: 176 × 2500 + 1024 × 1250 + 42 × 10,000 = 2,140,000.
    mocks.openai.enqueue({ kind: "text", text: "Hi.", usage: { prompt_tokens: 1200, completion_tokens: 42, cached_tokens: 1024 } });
    await new OpenAI({ baseURL: `${a.url}/v1`, apiKey: APP_KEY, maxRetries: 0 }).chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "Hello" }] });
    // B: Anthropic SDK, streamed: 50 × 3000 + 10,000 × 300 + 2000 × 3750 + 1000 × 6000 + 400 × 15,000 = 22,650,000.
    mocks.anthropic.enqueue({
      kind: "text",
      text: "Cached.",
      usage: { input_tokens: 50, output_tokens: 400, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 3000, cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 } },
    });
    const stream = await new Anthropic({ baseURL: b.url, apiKey: APP_KEY, maxRetries: 0 }).messages.create({ model: "claude", max_tokens: 500, stream: true, messages: [{ role: "user", content: "Hello" }] });
    for await (const _ of stream) void _;
    // B: the billing team's key: 100 × 2500 + 10 × 10,000 = 350,000.
    mocks.openai.enqueue({ kind: "text", text: "Ok.", usage: { prompt_tokens: 100, completion_tokens: 10 } });
    await new OpenAI({ baseURL: `${b.url}/v1`, apiKey: LIMITED_KEY, maxRetries: 0 }).chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "Hello" }] });
    await Promise.all(gateways.map((gateway) => gateway.ledger.flush()));
  });

  it("reports every gateway's requests from either one, exactly, and as the records add up", async () => {
    for (const gateway of gateways) {
      const response = await report(gateway, `from=${today()}&to=${today()}&groupBy=team,route,model`);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const body = await response.json();
      expect(body.rows).toEqual([
        expect.objectContaining({ team: "billing", route: "gpt", model: "gpt-4o", requests: 1, inputTokens: 100, outputTokens: 10, costNano: "350000", costUsd: "0.00035" }),
        expect.objectContaining({ team: "search", route: "claude", model: "claude-sonnet-4-6", requests: 1, inputTokens: 50, cacheReadTokens: 10_000, cacheWrite5mTokens: 2000, cacheWrite1hTokens: 1000, outputTokens: 400, costNano: "22650000", cacheSavingsNano: "27000000" }),
        expect.objectContaining({ team: "search", route: "gpt", model: "gpt-4o", requests: 1, inputTokens: 176, cacheReadTokens: 1024, outputTokens: 42, costNano: "2140000", cacheSavingsNano: "1280000" }),
      ]);
      expect(body.totals).toMatchObject({ requests: 3, errors: 0, costNano: "25140000", costUsd: "0.02514", cacheSavingsNano: "28280000", cacheSavingsUsd: "0.02828" });
    }
    // The same total as the records themselves, read from Redis.
    const records = await new RedisLedgerStore(rig.redis, rig.prefix).records(today());
    expect(records.reduce((sum, record) => sum + record.cost.totalNano, 0)).toBe(25_140_000);
  });

  it("exports CSV with the same figures", async () => {
    const response = await report(gateways[1]!, `from=${today()}&to=${today()}&groupBy=day,key&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="tollgate-costs-${today()}-to-${today()}.csv"`);
    const rows = parse(await response.text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => [row.day, row.key, row.requests, row.cost_usd, row.cache_savings_usd])).toEqual([
      [today(), "app", "2", "0.02479", "0.02828"],
      [today(), "limited", "1", "0.00035", "0"],
    ]);
  });
});

describe("who may read cost reports, and bad queries", () => {
  it("refuses a missing key (401) and a tenant's key (403), in the dialect the client speaks", async () => {
    const gateway = gateways[0]!;
    const missing = await report(gateway, "", {});
    expect(missing.status).toBe(401);
    expect((await missing.json()).error).toMatchObject({ type: "authentication_error", message: expect.stringContaining("takes the admin key") });

    const wrong = await report(gateway, "", { authorization: "Bearer tg_not_a_key" });
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).error).toMatchObject({ code: "invalid_api_key", message: expect.stringMatching(/^invalid API key: \/v1\/admin\/costs takes the admin key/) });

    const tenant = await report(gateway, "", { authorization: `Bearer ${APP_KEY}` });
    expect(tenant.status).toBe(403);
    expect((await tenant.json()).error).toMatchObject({ type: "permission_error", message: expect.stringContaining("admin key") });

    const anthropicTenant = await report(gateway, "", { "x-api-key": APP_KEY, "anthropic-version": "2023-06-01" });
    expect(anthropicTenant.status).toBe(403);
    expect(await anthropicTenant.json()).toMatchObject({ type: "error", error: { type: "permission_error" } });
  });

  it("answers a bad parameter with a 400 naming it", async () => {
    const response = await report(gateways[0]!, "groupBy=team,customer");
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ type: "invalid_request_error", param: "groupBy", message: expect.stringContaining('unknown dimension "customer"') });
  });

  it("takes GET only", async () => {
    const response = await fetch(`${gateways[0]!.url}/v1/admin/costs`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });
});
