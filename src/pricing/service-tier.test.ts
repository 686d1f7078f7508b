import { describe, expect, it } from "vitest";
import { computeCost } from "./compute-cost.ts";
import { findModelPrice } from "./find-model-price.ts";
import { priceAtTier } from "./service-tier.ts";

// OpenAI's priority tier bills every token at its own price (openai.com/api-priority-processing).
const usage = { inputTokens: 1_000, cacheReadTokens: 1_000, outputTokens: 100 };

function costAt(model: string, tier: string | undefined, pricing?: Parameters<typeof findModelPrice>[0]["pricing"]) {
  const price = findModelPrice({ type: "openai", ...(pricing ? { pricing } : {}) }, model);
  if (!price) throw new Error(`${model} has no price`);
  const atTier = priceAtTier(price, tier);
  return atTier && computeCost(usage, atTier).totalNano;
}

describe("priceAtTier", () => {
  it("prices a dated snapshot at its model's priority rates: gpt-4.1 $3.50 / $0.875 cached / $14 per 1M", () => {
    // In nano-dollars per token: $3.50 per 1M is 3,500.
    expect(costAt("gpt-4.1-2025-04-14", "priority")).toBe(1_000 * 3_500 + 1_000 * 875 + 100 * 14_000);
  });

  it("keeps the standard rates for the default tier and for an answer that names none", () => {
    const standard = 1_000 * 2_000 + 1_000 * 500 + 100 * 8_000;
    expect(costAt("gpt-4.1", "default")).toBe(standard);
    expect(costAt("gpt-4.1", undefined)).toBe(standard);
  });

  it("gives the first gpt-4o snapshot no cached-input discount at priority either ($8.75 / $26.25)", () => {
    expect(costAt("gpt-4o-2024-05-13", "priority")).toBe(2_000 * 8_750 + 100 * 26_250);
  });

  it("has no priority price for a model priced in config (a negotiated price has its own premium)", () => {
    expect(costAt("gpt-4.1", "priority", { models: { "gpt-4.1": { inputPerMillion: 1, outputPerMillion: 4 } } })).toBeUndefined();
  });

  it("has no price for a tier it does not know", () => {
    expect(costAt("gpt-4.1", "scale")).toBeUndefined();
    expect(costAt("gpt-4.1", "flex")).toBeUndefined();
  });
});
