import { describe, expect, it } from "vitest";
import { findModelPrice, type PricedProvider } from "../../src/pricing/find-model-price.ts";
import { computeCost } from "../../src/pricing/compute-cost.ts";

// docs/metering.md: {"gpuHourUsd": 2, "inputTokensPerSecond": 5000, "outputTokensPerSecond": 100}
// "gives each prompt token 2 / (5000 × 3600) USD and each generated token 2 / (100 × 3600) USD".
// ratesFromGpuHour rounds those per-token prices to whole pico-dollars first (111,111 and
// 5,555,556 pico), so the error grows with the token count instead of being rounded once.
const local: PricedProvider = {
  type: "openai-compatible",
  pricing: { default: { gpuHourUsd: 2, inputTokensPerSecond: 5000, outputTokensPerSecond: 100 } },
};

describe("local GPU-hour pricing is exact per line", () => {
  it("0.2 GPU-hours of prefill (3.6M prompt tokens at 5000 tok/s) cost exactly $0.40", () => {
    const price = findModelPrice(local, "tiny-local")!;
    // 3,600,000 / (5000 × 3600) h = 0.2 h × $2 = $0.40 = 400,000,000 nano.
    expect(computeCost({ inputTokens: 3_600_000 }, price).inputNano).toBe(400_000_000);
  });

  it("one GPU-hour of decode (360k tokens at 100 tok/s) costs exactly $2", () => {
    const price = findModelPrice(local, "tiny-local")!;
    // 360,000 / (100 × 3600) h = 1 h × $2 = 2,000,000,000 nano.
    expect(computeCost({ outputTokens: 360_000 }, price).outputNano).toBe(2_000_000_000);
  });
});
