import { describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { Admission } from "../../src/budgets/admission.ts";
import { windowKey, windowOf } from "../../src/budgets/budget-window.ts";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { PriceBook } from "../../src/metering/price-book.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { computeCost } from "../../src/pricing/compute-cost.ts";
import { promptBytes } from "../../src/budgets/worst-case-cost.ts";

// A client's own Anthropic cache_control breakpoints are passed through to the provider
// (parse-anthropic-request.ts keeps them, convert-to-anthropic-request.ts sends them), so the
// prompt can be billed as a 1-hour cache write at 2x the input price. admission.ts bounded input
// at the cache-write price only when the ROUTE had a promptCache policy, not when the request
// itself carried cache marks: the reservation was then smaller than what the request could
// cost, and a hard budget was overspent.

const config = resolveConfig(
  {
    providers: { anthropic: { type: "anthropic", apiKey: { env: "K" } } },
    routes: { claude: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], budget: { usd: 1, window: "total" } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
  },
  { K: "sk" },
);
const prices = new PriceBook(config.providers);
const caller = { kind: "key" as const, key: config.keys[0]! };

const bigSystem = "x".repeat(100_000);
const request: ChatRequest = {
  route: "claude",
  stream: false,
  streamUsage: false,
  maxTokens: 10,
  messages: [
    { role: "system", content: bigSystem, cacheControl: { ttl: "1h" } },
    { role: "user", content: [{ type: "text", text: "hi" }] },
  ],
};

describe("worst case of a request with its own 1h cache_control marks", () => {
  it("reserves at least what the provider can bill for it", async () => {
    const store = new MemoryAdmissionStore();
    const now = Date.parse("2026-11-22T12:00:00Z");
    const admission = new Admission({ config, store, prices, now: () => now });
    await admission.admit({ requestId: "req_cm", caller, routeName: "claude", route: config.routes.claude!, request });
    const key = windowKey("route:claude", windowOf(config.routes.claude!.budget!, now));
    const [level] = await store.levels([key], now);

    // The most the provider can bill: every prompt token (at most the byte bound) written to
    // the 1-hour cache, plus max_tokens of output.
    const price = prices.priceOf("anthropic", "claude-sonnet-4-6")!;
    const inputBound = promptBytes(request);
    const billable = computeCost({ cacheWrite1hTokens: inputBound, outputTokens: 10 }, price).totalNano;
    expect(level!.reservedNano).toBeGreaterThanOrEqual(billable);
  });

  it("a hard budget that held the reservation is overspent by the one request it admitted", async () => {
    const store = new MemoryAdmissionStore();
    const now = Date.parse("2026-11-22T12:00:00Z");
    const price = prices.priceOf("anthropic", "claude-sonnet-4-6")!;
    // Budget = exactly what admission reserves for this request.
    const probeStore = new MemoryAdmissionStore();
    const probe = new Admission({ config, store: probeStore, prices, now: () => now });
    await probe.admit({ requestId: "probe", caller, routeName: "claude", route: config.routes.claude!, request });
    const reserved = (await probeStore.levels(["route:claude|total"], now))[0]!.reservedNano;
    const tight = { ...config, routes: { claude: { ...config.routes.claude!, budget: { usd: reserved / 1e9, window: "total" as const, mode: "hard" as const, timeZone: "UTC" } } } };
    const admission = new Admission({ config: tight, store, prices, now: () => now });
    const ticket = await admission.admit({ requestId: "req_cm2", caller, routeName: "claude", route: tight.routes.claude, request });
    // Anthropic bills the 100,000-byte system prompt (~100,000 tokens at worst) as a 1h cache write.
    const usage = { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 100_000, outputTokens: 10, reasoningTokens: 0 };
    await ticket.settle(makeCostRecord({ usage, cost: computeCost(usage, price) }));
    const [level] = await store.levels(["route:claude|total"], now);
    expect(level!.spentNano).toBeLessThanOrEqual(reserved);
  });
});

// The route's own promptCache policy writes at its TTL, on Claude only: a 5-minute write bills
// 1.25× input, and OpenAI bills no writes at all. Was: 2× input on every target whenever the
// policy was on, which refused requests a per-request cap or a budget could take.
describe("worst case on a route whose promptCache policy caches", () => {
  const cached = resolveConfig(
    {
      providers: { anthropic: { type: "anthropic", apiKey: { env: "K" } }, openai: { type: "openai", apiKey: { env: "K" } } },
      routes: {
        claude5m: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], budget: { usd: 1, window: "total" }, policies: { promptCache: { mode: "auto" } } },
        claude1h: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], budget: { usd: 1, window: "total" }, policies: { promptCache: { mode: "auto", ttl: "1h" } } },
        gpt: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 1, window: "total" }, policies: { promptCache: { mode: "auto" } } },
      },
      keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
    },
    { K: "sk" },
  );
  const plain: ChatRequest = { ...request, route: "claude5m", messages: [{ role: "system", content: bigSystem }, { role: "user", content: [{ type: "text", text: "hi" }] }] };
  const now = Date.parse("2026-11-22T12:00:00Z");
  const reserved = async (routeName: string) => {
    const store = new MemoryAdmissionStore();
    const admission = new Admission({ config: cached, store, prices: new PriceBook(cached.providers), now: () => now });
    await admission.admit({ requestId: `req_${routeName}`, caller: { kind: "key", key: cached.keys[0]! }, routeName, route: cached.routes[routeName]!, request: { ...plain, route: routeName } });
    return (await store.levels([`route:${routeName}|total`], now))[0]!.reservedNano;
  };
  const inputBound = promptBytes(plain);
  // Claude Sonnet 4.6 in the US (reserved there unless the request says "global"): $3.30 / 1M input, $16.50 output.
  const sonnetUs = { input: 3_300, output: 16_500 };

  it.each([
    ["claude5m", 1.25],
    ["claude1h", 2],
  ])("%s: the prompt as a write at the policy's TTL (%s× input)", async (routeName, times) => {
    expect(await reserved(routeName)).toBe(inputBound * sonnetUs.input * times + 10 * sonnetUs.output);
  });

  it("an OpenAI target: the prompt at the input price", async () => {
    // gpt-4o: $2.50 / 1M input, $10 output.
    expect(await reserved("gpt")).toBe(inputBound * 2_500 + 10 * 10_000);
  });
});
