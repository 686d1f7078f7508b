import { describe, expect, it } from "vitest";
import { computeCost } from "./compute-cost.ts";
import { toModelPrice } from "./find-model-price.ts";
import { picoPerToken } from "./rates.ts";

// A contract price may have more than six decimals in USD per 1M tokens, i.e. a fraction of a
// pico-dollar per token. It was rounded to whole pico-dollars before it was multiplied, so the
// line was rounded twice, and a tiny non-zero price became a silent $0.

describe("a configured price with more than six decimals", () => {
  it("is kept as a fraction, never rounded before it is multiplied", () => {
    expect(picoPerToken(2.5)).toBe(2_500_000);
    expect(picoPerToken(0.075)).toBe(75_000); // 0.075 × 1e6 is 75000.00000000001 in floating point
    expect(picoPerToken(1.2345678)).toEqual({ pico: 12_345_678, perTokens: 10 });
  });

  it("$1.2345678 / 1M: 1,000,000 input tokens cost exactly $1.2345678 (1,234,567,800 nano)", () => {
    const price = toModelPrice({ inputPerMillion: 1.2345678, outputPerMillion: 0 });
    expect(computeCost({ inputTokens: 1_000_000 }, price).inputNano).toBe(1_234_567_800);
  });

  it("$0.0000004 / 1M (0.4 pico per token): 10,000,000 output tokens cost 4,000 nano, not $0", () => {
    // 10,000,000 × 0.0000004 / 1,000,000 USD = 4e-6 USD.
    const price = toModelPrice({ inputPerMillion: 0, outputPerMillion: 0.0000004 });
    expect(computeCost({ outputTokens: 10_000_000 }, price).outputNano).toBe(4_000);
  });
});
