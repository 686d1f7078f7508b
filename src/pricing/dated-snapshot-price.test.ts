import { describe, expect, it } from "vitest";
import { computeCost } from "../../src/pricing/compute-cost.ts";
import { findModelPrice } from "../../src/pricing/find-model-price.ts";

// find-model-price.ts prices every dated snapshot as its base model (DATED_SNAPSHOT strips the
// date). That holds for most snapshots, but not for gpt-4o-2024-05-13, the original GPT-4o,
// which OpenAI still lists at $5.00 input / $15.00 output per 1M (no cached-input discount),
// not gpt-4o's $2.50 / $10.00. A route that pins it is billed at about half its invoice.
// (Figure from OpenAI's pricing page / the LiteLLM price map; not in REFERENCE.md's table.)

describe("gpt-4o-2024-05-13", () => {
  it("is priced at its own $5 / $15 per 1M, never at gpt-4o's $2.50 / $10", () => {
    const price = findModelPrice({ type: "openai" }, "gpt-4o-2024-05-13");
    if (price === undefined) throw new Error("gpt-4o-2024-05-13 has no price");
    // 1M input × 5000 nano + 1M output × 15,000 nano = $20 = 20,000,000,000 nano.
    expect(computeCost({ inputTokens: 1_000_000, outputTokens: 1_000_000 }, price).totalNano).toBe(20_000_000_000);
  });
});
