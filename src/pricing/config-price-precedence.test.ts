import { describe, expect, it } from "vitest";
import { computeCost } from "./compute-cost.ts";
import { findModelPrice, type PricedProvider } from "./find-model-price.ts";

// Which config price a call is billed at, when names differ by a snapshot date. Found by review:
// a config price for gpt-4o billed a route pinned to gpt-4o-2024-05-13, which OpenAI prices on
// its own ($5 / $15, not gpt-4o's $2.50 / $10), and where the asked base model and the answering
// snapshot both had config prices, the base model's won, the reverse of the bundled list's order.

const MILLION = 1_000_000;
const billed = (provider: PricedProvider, model: string, responseModel?: string) =>
  computeCost({ inputTokens: MILLION, outputTokens: MILLION }, findModelPrice(provider, model, responseModel)!).totalNano;

describe("config prices and dated snapshots", () => {
  const gpt4oContract: PricedProvider = { type: "openai", pricing: { models: { "gpt-4o": { inputPerMillion: 2, outputPerMillion: 8 } } } };

  it("a price for the base model covers its snapshots, but not one the bundled list prices on its own", () => {
    expect(billed(gpt4oContract, "gpt-4o-2024-08-06")).toBe(10_000_000_000); // the contract's $2 + $8
    expect(billed(gpt4oContract, "gpt-4o-2024-05-13")).toBe(20_000_000_000); // the list's $5 + $15
  });

  it("the answering snapshot's own config price wins over the asked model's", () => {
    const both: PricedProvider = { type: "openai", pricing: { models: { "gpt-4o": { inputPerMillion: 2, outputPerMillion: 8 }, "gpt-4o-2024-11-20": { inputPerMillion: 1, outputPerMillion: 4 } } } };
    expect(billed(both, "gpt-4o", "gpt-4o-2024-11-20")).toBe(5_000_000_000);
    expect(billed(both, "gpt-4o", "gpt-4o-2024-08-06")).toBe(10_000_000_000);
  });

  it("an exact config price for the separately listed snapshot is used", () => {
    const own: PricedProvider = { type: "openai", pricing: { models: { "gpt-4o-2024-05-13": { inputPerMillion: 4, outputPerMillion: 12 } } } };
    expect(billed(own, "gpt-4o-2024-05-13")).toBe(16_000_000_000);
  });
});

// Anthropic bills cache reads at 0.1× input, 5-minute writes at 1.25×, 1-hour writes at 2×. An
// override giving only input and output priced them all at 1× (found by review: 1M cache reads
// recorded at $3 for a $0.30 invoice).
describe("an Anthropic override with only input and output prices", () => {
  const contract: PricedProvider = { type: "anthropic", pricing: { models: { "claude-sonnet-4-6": { inputPerMillion: 2.4, outputPerMillion: 12 } } } };
  const cacheCost = (provider: PricedProvider) =>
    computeCost({ cacheReadTokens: MILLION, cacheWrite5mTokens: MILLION, cacheWrite1hTokens: MILLION }, findModelPrice(provider, "claude-sonnet-4-6")!);

  it("prices cache traffic at Anthropic's multiples of its input price", () => {
    expect(cacheCost(contract)).toMatchObject({ cacheReadNano: 240_000_000, cacheWriteNano: 3_000_000_000 + 4_800_000_000 });
  });

  it("keeps cache prices the override gives, and OpenAI's missing cache prices at its input price", () => {
    const explicit: PricedProvider = { type: "anthropic", pricing: { default: { inputPerMillion: 2.4, outputPerMillion: 12, cachedInputPerMillion: 0.2 } } };
    expect(cacheCost(explicit)).toMatchObject({ cacheReadNano: 200_000_000, cacheWriteNano: 3_000_000_000 + 4_800_000_000 });
    const openai: PricedProvider = { type: "openai", pricing: { models: { "gpt-4.1": { inputPerMillion: 2, outputPerMillion: 8 } } } };
    expect(computeCost({ cacheReadTokens: MILLION }, findModelPrice(openai, "gpt-4.1")!).cacheReadNano).toBe(2_000_000_000);
  });
});
