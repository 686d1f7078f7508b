import { describe, expect, it } from "vitest";
import { mergeUsage } from "./usage.ts";

describe("mergeUsage", () => {
  it("takes a later report of the same prompt with its cache split whole: cached tokens are not billed twice", () => {
    // prompt_tokens 1000 without details, then 1000 with 800 of them cached (vLLM's
    // continuous usage chunks, then its final one). Was: 1000 uncached + 800 cache reads.
    const merged = mergeUsage({ inputTokens: 1000, outputTokens: 1 }, { inputTokens: 200, cacheReadTokens: 800, outputTokens: 7 });
    expect(merged).toEqual({ inputTokens: 200, cacheReadTokens: 800, outputTokens: 7 });
  });

  it("keeps Anthropic's message_start input when message_delta reports output only, or less of the input", () => {
    const start = { inputTokens: 10, cacheReadTokens: 1000, cacheWrite5mTokens: 50, outputTokens: 1 };
    expect(mergeUsage(start, { outputTokens: 42 })).toEqual({ ...start, outputTokens: 42 });
    // A message_delta whose cache-write fields were left out adds up to less: the start stands.
    expect(mergeUsage(start, { inputTokens: 10, cacheReadTokens: 1000, outputTokens: 42 })).toEqual({ ...start, outputTokens: 42 });
  });

  it("takes the largest output seen (cumulative counts), reasoning too", () => {
    expect(mergeUsage({ outputTokens: 30, reasoningTokens: 20 }, { outputTokens: 12 })).toEqual({ outputTokens: 30, reasoningTokens: 20 });
  });
});
