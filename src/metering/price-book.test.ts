import { describe, expect, it } from "vitest";
import { PriceBook } from "./price-book.ts";

// An unpriced model is warned about once per process. Admission looks a price up by the route's
// model, the meter by the route's and the answering model: that used to log the warning twice on
// the first request, and once more for every new snapshot name the provider answered with.

describe("PriceBook", () => {
  it("warns once per provider and model, however it is looked up", () => {
    const lines: string[] = [];
    const prices = new PriceBook({ local: { type: "openai-compatible", name: "local", baseUrl: "http://127.0.0.1:1/v1" } as never }, (line) => lines.push(line));
    expect(prices.priceOf("local", "tiny")).toBeUndefined();
    expect(prices.priceOf("local", "tiny", "tiny-q4")).toBeUndefined();
    expect(prices.priceOf("local", "tiny", "tiny-q8")).toBeUndefined();
    expect(prices.priceOf("local", "other")).toBeUndefined();
    expect(lines).toEqual([
      '[tollgate] warning: no price for model "tiny" on provider "local": its records are flagged unpriced; add providers.local.pricing.models["tiny"] to the config',
      '[tollgate] warning: no price for model "other" on provider "local": its records are flagged unpriced; add providers.local.pricing.models["other"] to the config',
    ]);
  });
});
