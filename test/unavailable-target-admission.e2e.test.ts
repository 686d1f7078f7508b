import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { ANTHROPIC_KEY, APP_KEY, OPENAI_KEY, postJson, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";

// A provider marked optional whose key is not set is never called until a restart ("set
// KEYLESS_API_KEY and restart tollgate"): the router skips it. Admission weighed its worst case
// all the same, so a cheap request on a route whose dear target had no key got a 400
// (maxCostPerRequestUsd) or a 402 (budget) for a price it could never pay, and a request let
// through held that price in the budget while it ran.

let mocks: MockProviders;
let gateway: RunningGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  const targets = [
    { provider: "keyless", model: "claude-opus-4-1" }, // $15 / $75 per 1M: never callable
    { provider: "openai", model: "gpt-4o-mini" }, // $0.15 / $0.60 per 1M
  ];
  gateway = await startGateway({
    config: {
      ...base,
      providers: { ...base.providers, keyless: { type: "anthropic", apiKey: { env: "KEYLESS_API_KEY" }, optional: true } },
      routes: {
        ...base.routes,
        capped: { targets, maxCostPerRequestUsd: 0.01 },
        budgeted: { targets, budget: { usd: 0.01, window: "total" } },
        "keyless-budgeted": { targets: [targets[0]!], budget: { usd: 0.01, window: "total" } },
      },
      store: { path: temporaryLedgerPath() },
    },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    log: () => {},
  });
});
afterEach(() => mocks.openai.reset());
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});

const ask = (route: string) => postJson(gateway, "/v1/chat/completions", { model: route, max_tokens: 1000, messages: [{ role: "user", content: "hi" }] });

describe("a route whose dearest target's provider has no key", () => {
  // gpt-4o-mini's worst case for "hi" with max_tokens 1000: 18 × 150 + 1000 × 600 nano ≈ $0.0006.
  // claude-opus-4-1's: 1000 × 75,000 nano × 1.1 (US) ≈ $0.075, over both the cap and the budget.
  it("is not refused by maxCostPerRequestUsd for the keyless target's price", async () => {
    const response = await ask("capped");
    expect(response.status, await response.text()).toBe(200);
  });

  it("is not refused by a budget that holds the callable target's worst case many times over", async () => {
    const response = await ask("budgeted");
    expect(response.status, await response.text()).toBe(200);
  });

  it("with no target it can call, says which key to set (not a 402 for the price it can never pay)", async () => {
    const response = await ask("keyless-budgeted");
    const { error } = (await response.json()) as { error: { message: string } };
    expect({ status: response.status, message: error.message }).toEqual({
      status: 503,
      message: 'provider "keyless" has no API key: set KEYLESS_API_KEY and restart tollgate',
    });
    const budgets = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    const { scopes } = (await budgets.json()) as { scopes: { scope: string; spentUsd: number; reservedUsd: number }[] };
    expect(scopes.find((scope) => scope.scope === "route:keyless-budgeted")).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
  });
});
