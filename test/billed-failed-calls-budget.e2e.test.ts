import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completion, sendJson, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { APP_KEY, ledgerRecords, postJson, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";

// A request's reservation covers one call: the worst case on its route's most expensive target.
// A call the provider billed before it failed (vLLM's aborted answer, with its usage) is charged
// to the budgets before the route tries its next target, if they can take it on top of that
// reservation; a hard budget that cannot ends the request there, with that call billed once.
// Was: the fallback went ahead, and both calls were charged against one call's reservation.
//
// The local decoder is priced as gpt-4o: $2.50 / $10 per 1M = 2,500 / 10,000 nano a token.
// "hi" with max_tokens 100: input bound 18 tokens, worst case 18 × 2,500 + 100 × 10,000 = 1,045,000.
// vLLM aborts after 10 prompt + 90 completion tokens: 25,000 + 900,000 = 925,000 nano.
// gpt-4o answers with 10 + 100 tokens: 25,000 + 1,000,000 = 1,025,000 nano.

let decoder: FakeDecoder;
let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  decoder.handle = (_body, response) =>
    sendJson(response, completion("cmpl-1", { content: "The first part of a long answer" }, "abort", { usage: { prompt_tokens: 10, completion_tokens: 90, total_tokens: 100 } }));
  mocks = startMockProviders();
  const base = testConfig(decoder.baseUrl);
  const targets = [{ provider: "local", model: "fake-model" }, { provider: "openai", model: "gpt-4o" }];
  gateway = await startTestGateway(
    {
      ...base,
      providers: { ...base.providers, local: { ...base.providers.local, pricing: { default: { inputPerMillion: 2.5, outputPerMillion: 10 } } } },
      routes: {
        ...base.routes,
        // One worst case (1,045,000) fits; that and the aborted call (1,970,000) do not.
        tight: { targets, budget: { usd: 0.0015, window: "total" } },
        roomy: { targets, budget: { usd: 0.01, window: "total" } },
      },
    },
    "fetch",
  );
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
  await decoder?.close();
});

async function routeBudget(route: string): Promise<{ spentUsd: number; reservedUsd: number; limitUsd: number }> {
  const response = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } });
  const { scopes } = (await response.json()) as { scopes: { scope: string; spentUsd: number; reservedUsd: number; limitUsd: number }[] };
  return scopes.find((scope) => scope.scope === `route:${route}`)!;
}

describe("a billed call before a fallback, on a budgeted route", () => {
  it("where the hard budget cannot also take it, the route stops there: that call is the request's record, billed once", async () => {
    const openaiCalls = mocks.openai.requests.length;
    const response = await postJson(gateway, "/v1/chat/completions", { model: "tight", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const id = response.headers.get("x-tollgate-request-id")!;
    const record = await waitForRecord(gateway, id);
    expect(record).toMatchObject({ status: "error", provider: "local", usage: { inputTokens: 10, outputTokens: 90 } });
    expect(record.cost.totalNano).toBe(925_000);
    expect(mocks.openai.requests.length).toBe(openaiCalls);
    expect((await ledgerRecords(gateway)).filter((each) => each.attemptOf === id)).toEqual([]);
    expect(await routeBudget("tight")).toMatchObject({ spentUsd: 0.000925, reservedUsd: 0 });
  });

  it("where it can, the route falls back, and the budget is charged for both calls exactly", async () => {
    mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 10, completion_tokens: 100 } });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "roomy", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    // What the budget has left after both calls: 10,000,000 − 925,000 − 1,025,000 nano.
    expect(response.headers.get("x-tollgate-budget-remaining-usd")).toBe("0.00805");
    const id = response.headers.get("x-tollgate-request-id")!;
    expect((await waitForRecord(gateway, id)).cost.totalNano).toBe(1_025_000);
    const earlier = (await ledgerRecords(gateway)).filter((each) => each.attemptOf === id);
    expect(earlier.map((each) => ({ requestId: each.requestId, provider: each.provider, totalNano: each.cost.totalNano }))).toEqual([
      { requestId: `${id}.1`, provider: "local", totalNano: 925_000 },
    ]);
    expect(await routeBudget("roomy")).toMatchObject({ spentUsd: 0.00195, reservedUsd: 0 });
  });
});
