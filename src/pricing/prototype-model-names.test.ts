import { describe, expect, it } from "vitest";
import { findModelPrice, type PricedProvider } from "./find-model-price.ts";
import { PriceBook } from "../metering/price-book.ts";

// pricing.models is a plain object from JSON. Was: a model name that is a member of
// Object.prototype ("constructor", "toString", "valueOf", …) was "found" there, priced at $0 per
// token, and the record was not flagged unpriced: the silent $0 docs/metering.md says never happens.
// The name can come from the upstream (the answering model) or a route target.
const local: PricedProvider = {
  type: "openai-compatible",
  pricing: { models: { "llama-3-8b": { inputPerMillion: 0.1, outputPerMillion: 0.2 } } },
};

describe("a model name that exists only on Object.prototype", () => {
  it("is unpriced, not priced at $0 (answering model reported as \"constructor\")", () => {
    // The route asked for a model with no configured price and no provider default: unpriced...
    expect(findModelPrice(local, "qwen-7b")).toBeUndefined();
    // ...unless the server names the answering model "constructor".
    expect(findModelPrice(local, "qwen-7b", "constructor")).toBeUndefined();
  });

  it("PriceBook (what the meter uses) flags it unpriced too", () => {
    const book = new PriceBook({ local: { name: "local", ...local, optional: false, timeoutMs: 1, maxRetries: 0 } as never });
    expect(book.priceOf("local", "toString")).toBeUndefined();
  });
});
