import { describe, expect, it } from "vitest";
import { computeCost } from "./compute-cost.ts";
import { findModelPrice } from "./find-model-price.ts";
import { priceInGeo } from "./inference-geo.ts";

// US-only inference on Claude is billed at 1.1× every token price (input, output, cache reads and
// writes). Costs by hand, claude-sonnet-4-6 ($3 input, $0.30 cache read, $3.75 5-minute write,
// $15 output per 1M tokens), 1,000 input + 2,000 cache read + 400 cache write + 100 output tokens:
//   global: 3,000,000 + 600,000 + 1,500,000 + 1,500,000 = 6,600,000 nano-dollars
//   us:     3,300,000 + 660,000 + 1,650,000 + 1,650,000 = 7,260,000 nano-dollars

const sonnet = findModelPrice({ type: "anthropic" }, "claude-sonnet-4-6")!;
const usage = { inputTokens: 1000, cacheReadTokens: 2000, cacheWrite5mTokens: 400, outputTokens: 100 };

describe("priceInGeo", () => {
  it("bills inference in the US at 1.1× every token price, exactly", () => {
    expect(computeCost(usage, sonnet)).toMatchObject({ inputNano: 3_000_000, cacheReadNano: 600_000, cacheWriteNano: 1_500_000, outputNano: 1_500_000, totalNano: 6_600_000 });
    expect(computeCost(usage, priceInGeo(sonnet, "us"))).toMatchObject({ inputNano: 3_300_000, cacheReadNano: 660_000, cacheWriteNano: 1_650_000, outputNano: 1_650_000, totalNano: 7_260_000 });
  });

  it("leaves the price as it is for global inference, or where nobody said", () => {
    expect(priceInGeo(sonnet, "global")).toBe(sonnet);
    expect(priceInGeo(sonnet, undefined)).toBe(sonnet);
  });

  it("keeps a rate that 1.1× does not leave whole as an exact fraction, never rounded before it is multiplied", () => {
    // 1 pico-dollar per token × 1.1 = 11 pico per 10 tokens: 1,000,000 tokens cost 1.1 µ$ = 1,100 nano.
    const tiny = { rates: { input: 1, cacheRead: 1, cacheWrite5m: 1, cacheWrite1h: 1, output: 1 }, source: "test" };
    const inUs = priceInGeo(tiny, "us");
    expect(inUs.rates.input).toEqual({ pico: 11, perTokens: 10 });
    expect(computeCost({ inputTokens: 1_000_000 }, inUs).inputNano).toBe(1_100);
  });

  it("scales the long-context rates too", () => {
    const sonnet45 = findModelPrice({ type: "anthropic" }, "claude-sonnet-4-5")!;
    expect(sonnet45.longContext).toBeDefined();
    const long = { inputTokens: 300_000, outputTokens: 0 };
    expect(computeCost(long, priceInGeo(sonnet45, "us")).inputNano * 10).toBe(computeCost(long, sonnet45).inputNano * 11);
  });
});

// Admission prices every Claude target of every request at "us" (the workspace may keep inference
// there): the scaled price of a price the price book keeps is worked out once, not per request.
describe("priceInGeo's scaled prices", () => {
  it("are the same object for the same price and geography, and the price itself where nothing is added", () => {
    const price = findModelPrice({ type: "anthropic" }, "claude-sonnet-4-6")!;
    expect(priceInGeo(price, "us")).toBe(priceInGeo(price, "us"));
    expect(priceInGeo(price, "us")).not.toBe(price);
    expect(priceInGeo(price, "global")).toBe(price);
  });
});
