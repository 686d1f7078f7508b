import { describe, expect, it } from "vitest";
import { computeCost } from "./compute-cost.ts";
import { findModelPrice } from "./find-model-price.ts";
import { ConfigError, resolveConfig as resolveWithRetirements } from "../config/resolve-config.ts";

// A config price replaces the bundled one whole (a provider's `default` too). Claude Sonnet 4.5 costs $6 / $22.50 per 1M once
// a request's input is above 200k tokens; an override (a negotiated rate, say) written without a
// tier used to bill those requests at the base price, below the invoice, with no word said.

// Sonnet 4.5 retires on 2026-11-30 (retirement-warnings.test.ts); these tests look at prices only.
const resolveConfig = (raw: unknown, env: Record<string, string>) => {
  const resolved = resolveWithRetirements(raw, env);
  return { ...resolved, warnings: resolved.warnings.filter((warning) => warning.startsWith("providers.")) };
};

const negotiated = { inputPerMillion: 2.4, outputPerMillion: 12 };
const withTier = { ...negotiated, longContext: { aboveInputTokens: 200_000, inputPerMillion: 4.8, outputPerMillion: 18 } };
const config = (price: object) => ({
  providers: { anthropic: { type: "anthropic", apiKey: { env: "K" }, pricing: { models: { "claude-sonnet-4-5": price } } } },
  routes: { claude: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }] } },
  keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
});

describe("a configured long-context tier", () => {
  const price = findModelPrice({ type: "anthropic", pricing: { models: { "claude-sonnet-4-5": withTier } } }, "claude-sonnet-4-5-20250929")!;

  it("bills a request above the threshold at the tier's prices", () => {
    // 250,000 × $4.80 / 1M = 1,200,000,000 nano; 1,000 × $18 / 1M = 18,000,000 nano.
    expect(computeCost({ inputTokens: 250_000, outputTokens: 1_000 }, price).totalNano).toBe(1_218_000_000);
  });

  it("bills one at the threshold at the base prices", () => {
    // 200,000 × $2.40 / 1M = 480,000,000 nano; 1,000 × $12 / 1M = 12,000,000 nano.
    expect(computeCost({ inputTokens: 200_000, outputTokens: 1_000 }, price).totalNano).toBe(492_000_000);
  });

  it("counts cache reads toward the threshold and bills them at the tier's cached rate (Anthropic's 0.1× of its input here)", () => {
    // 1,000 + 210,000 cached = 211,000 > 200,000: 1,000 × 4,800 + 210,000 × 480 = 105,600,000 nano.
    expect(computeCost({ inputTokens: 1_000, cacheReadTokens: 210_000, outputTokens: 0 }, price).totalNano).toBe(105_600_000);
  });
});

describe("config checks", () => {
  it("warns at start-up about an override of a tiered model that has no tier", () => {
    const { warnings } = resolveConfig(config(negotiated), { K: "sk-ant" });
    expect(warnings).toEqual([
      'providers.anthropic.pricing.models["claude-sonnet-4-5"] has no longContext, so claude-sonnet-4-5\'s requests above 200000 input tokens are billed at its base price; ' +
        'anthropic charges more there (the bundled list: $6 / $22.5 per 1M): add "longContext": {"aboveInputTokens": 200000, "inputPerMillion": …, "outputPerMillion": …}',
    ]);
    expect(resolveConfig(config(withTier), { K: "sk-ant" }).warnings).toEqual([]);
  });

  it("warns about a provider-wide default price too, for each tiered model a route sends it", () => {
    const raw = config(negotiated);
    raw.providers.anthropic.pricing = { default: negotiated } as never;
    expect(resolveConfig(raw, { K: "sk-ant" }).warnings).toEqual([
      "providers.anthropic.pricing.default has no longContext, so claude-sonnet-4-5's requests above 200000 input tokens are billed at its base price; " +
        'anthropic charges more there (the bundled list: $6 / $22.5 per 1M): add "longContext": {"aboveInputTokens": 200000, "inputPerMillion": …, "outputPerMillion": …}',
    ]);
    raw.providers.anthropic.pricing = { default: withTier } as never;
    expect(resolveConfig(raw, { K: "sk-ant" }).warnings).toEqual([]);
  });

  it("refuses a tier on a GPU-hour price", () => {
    const raw = config({ gpuHourUsd: 2, inputTokensPerSecond: 5000, outputTokensPerSecond: 100, longContext: withTier.longContext });
    expect(() => resolveConfig(raw, { K: "sk-ant" })).toThrow(ConfigError);
    try {
      resolveConfig(raw, { K: "sk-ant" });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        'providers.anthropic.pricing.models.claude-sonnet-4-5.longContext: a GPU-hour price has no long-context tier: remove longContext, or price the model per 1M tokens',
      ]);
    }
  });
});
