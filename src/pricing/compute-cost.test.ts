import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { convertAnthropicUsage } from "../../adapters/anthropic/convert-anthropic-usage.ts";
import { mapAnthropicStream } from "../../adapters/anthropic/map-anthropic-stream.ts";
import { convertOpenAIUsage } from "../../adapters/openai/convert-openai-usage.ts";
import { mapOpenAIStream } from "../../adapters/openai/map-openai-stream.ts";
import { mergeUsage, type Usage } from "../model/usage.ts";
import { computeCost } from "./compute-cost.ts";
import { findModelPrice, type PricedProvider } from "./find-model-price.ts";
import { ratesFromUsdPerMillion } from "./rates.ts";
import { formatUsd } from "./format-usd.ts";

// Every expected figure below is worked out by hand in the comment beside it, from the published
// per-1M prices: $X per 1M tokens = X × 1000 nano-dollars per token.

const openai: PricedProvider = { type: "openai" };
const anthropic: PricedProvider = { type: "anthropic" };

async function usageOf(parts: AsyncGenerator<{ type: string; usage?: Usage }>): Promise<Usage> {
  let usage: Usage | undefined;
  for await (const part of parts) if (part.type === "usage" && part.usage) usage = mergeUsage(usage, part.usage);
  return usage ?? {};
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

function costOf(provider: PricedProvider, model: string, usage: Usage) {
  const price = findModelPrice(provider, model);
  if (!price) throw new Error(`no price for ${model}`);
  return computeCost(usage, price);
}

describe("cost of each usage shape, to the nano-dollar", () => {
  it("OpenAI o4-mini, not streamed: cached prompt tokens and reasoning tokens", () => {
    const usage = convertOpenAIUsage({
      prompt_tokens: 2006,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 1920 },
      completion_tokens_details: { reasoning_tokens: 128 },
    });
    expect(usage).toEqual({ inputTokens: 86, cacheReadTokens: 1920, outputTokens: 300, reasoningTokens: 128 });
    // o4-mini: input $1.10, cached $0.275, output $4.40 per 1M → 1100 / 275 / 4400 nano per token.
    // 86 × 1100 = 94,600; 1920 × 275 = 528,000; 300 × 4400 = 1,320,000 (reasoning is inside output).
    expect(costOf(openai, "o4-mini", usage)).toEqual({
      inputNano: 94_600,
      cacheReadNano: 528_000,
      cacheWriteNano: 0,
      outputNano: 1_320_000,
      totalNano: 1_942_600,
      cacheSavingsNano: 1_584_000, // 1920 × (1100 − 275)
    });
  });

  it("OpenAI gpt-4o, streamed: the usage chunk after the finish chunk, dated snapshot name", async () => {
    const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-2024-08-06" } as const;
    const chunks = [
      { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }], usage: null },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
      { ...base, choices: [], usage: { prompt_tokens: 1200, completion_tokens: 42, total_tokens: 1242, prompt_tokens_details: { cached_tokens: 1024 } } },
    ] as unknown as OpenAI.Chat.Completions.ChatCompletionChunk[];
    const usage = await usageOf(mapOpenAIStream(from(chunks)));
    const price = findModelPrice(openai, "gpt-4o", "gpt-4o-2024-08-06");
    // gpt-4o: $2.50 / $1.25 cached / $10 → 176 × 2500 = 440,000; 1024 × 1250 = 1,280,000; 42 × 10,000 = 420,000.
    expect(computeCost(usage, price!)).toEqual({
      inputNano: 440_000,
      cacheReadNano: 1_280_000,
      cacheWriteNano: 0,
      outputNano: 420_000,
      totalNano: 2_140_000,
      cacheSavingsNano: 1_280_000,
    });
  });

  it("Anthropic Sonnet 4.5, not streamed: 5-minute and 1-hour cache writes and a cache read", () => {
    const usage = convertAnthropicUsage({
      input_tokens: 50,
      output_tokens: 400,
      cache_read_input_tokens: 10_000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 },
    });
    // $3 input, $3.75 5m write, $6 1h write, $0.30 read, $15 output per 1M.
    // 50 × 3000 = 150,000; 10,000 × 300 = 3,000,000; 2000 × 3750 + 1000 × 6000 = 13,500,000; 400 × 15,000 = 6,000,000.
    expect(costOf(anthropic, "claude-sonnet-4-5-20250929", usage)).toEqual({
      inputNano: 150_000,
      cacheReadNano: 3_000_000,
      cacheWriteNano: 13_500_000,
      outputNano: 6_000_000,
      totalNano: 22_650_000,
      cacheSavingsNano: 27_000_000, // 10,000 × (3000 − 300)
    });
  });

  it("Anthropic Haiku 4.5, streamed: input in message_start, cumulative output in message_delta", async () => {
    const events = [
      {
        type: "message_start",
        message: {
          id: "msg_1", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [], stop_reason: null, stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 4096, cache_creation_input_tokens: 0 },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 15 } },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 31 } },
      { type: "message_stop" },
    ] as unknown as Anthropic.Messages.RawMessageStreamEvent[];
    const usage = await usageOf(mapAnthropicStream(from(events)));
    expect(usage.outputTokens).toBe(31); // cumulative: the last count, not 1 + 15 + 31
    // Haiku 4.5: $1 input, $0.10 read, $5 output → 12 × 1000 = 12,000; 4096 × 100 = 409,600; 31 × 5000 = 155,000.
    expect(costOf(anthropic, "claude-haiku-4-5", usage)).toMatchObject({
      inputNano: 12_000,
      cacheReadNano: 409_600,
      cacheWriteNano: 0,
      outputNano: 155_000,
      totalNano: 576_600,
    });
  });

  it("Sonnet 4.5 above 200k input tokens: the long-context prices apply to every line", () => {
    const usage: Usage = { inputTokens: 150_000, cacheReadTokens: 60_000, outputTokens: 1000 };
    // 210,000 input in all > 200,000: $6 input, $0.60 read, $22.50 output.
    // 150,000 × 6000 = 900,000,000; 60,000 × 600 = 36,000,000; 1000 × 22,500 = 22,500,000.
    expect(costOf(anthropic, "claude-sonnet-4-5", usage)).toMatchObject({
      inputNano: 900_000_000,
      cacheReadNano: 36_000_000,
      outputNano: 22_500_000,
      totalNano: 958_500_000,
    });
    // One token under the threshold: the standard prices.
    expect(costOf(anthropic, "claude-sonnet-4-5", { inputTokens: 140_000, cacheReadTokens: 60_000, outputTokens: 1000 }).totalNano).toBe(
      140_000 * 3000 + 60_000 * 300 + 1000 * 15_000,
    );
  });

  it("llama-server priced from a GPU hour: prefix-cache hits are free, each line rounds once", () => {
    const usage = convertOpenAIUsage({ prompt_tokens: 120, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 100 } });
    const local: PricedProvider = {
      type: "openai-compatible",
      pricing: { default: { gpuHourUsd: 2, inputTokensPerSecond: 5000, outputTokensPerSecond: 100 } },
    };
    // $2/h = 2e12 pico/h. Input: 2e12 / (5000 × 3600) = 111,111.1 → 111,111 pico per token;
    // output: 2e12 / (100 × 3600) = 5,555,555.6 → 5,555,556 pico per token.
    // 20 uncached × 111,111 = 2,222,220 pico → 2,222 nano; 8 × 5,555,556 = 44,444,448 pico → 44,444 nano.
    expect(costOf(local, "tiny-local", usage)).toEqual({
      inputNano: 2222,
      cacheReadNano: 0,
      cacheWriteNano: 0,
      outputNano: 44_444,
      totalNano: 46_666,
      cacheSavingsNano: 11_111, // 100 × 111,111 pico = 11,111,100 pico
    });
  });

  it("config overrides win over the bundled list, per model first, then the provider default", () => {
    const negotiated: PricedProvider = {
      type: "openai",
      pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 }, models: { "gpt-4o": { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 } } },
    };
    expect(costOf(negotiated, "gpt-4o-2024-11-20", { inputTokens: 1000, cacheReadTokens: 1000, outputTokens: 100 }).totalNano).toBe(
      1000 * 2000 + 1000 * 500 + 100 * 8000,
    );
    expect(costOf(negotiated, "gpt-4.1", { inputTokens: 1000, outputTokens: 100 }).totalNano).toBe(1000 * 1000 + 100 * 2000);
  });

  it("unknown models and unpriced local decoders have no price, never a silent $0", () => {
    expect(findModelPrice(openai, "gpt-9-preview")).toBeUndefined();
    expect(findModelPrice({ type: "openai-compatible" }, "tiny-local")).toBeUndefined();
    // A dated suffix never jumps to a different model: claude-sonnet-4-9 is not claude-sonnet-4.
    expect(findModelPrice(anthropic, "claude-sonnet-4-9")).toBeUndefined();
  });
});

describe("formatUsd", () => {
  it("prints nano-dollars as exact decimal dollars", () => {
    expect(formatUsd(0)).toBe("0");
    expect(formatUsd(12_500)).toBe("0.0000125");
    expect(formatUsd(22_650_000)).toBe("0.02265");
    expect(formatUsd(2_000_000_000)).toBe("2");
    expect(formatUsd(1_234_567_891_234)).toBe("1234.567891234");
    expect(formatUsd(-5)).toBe("-0.000000005");
    // One nano-dollar short of a whole dollar, and the largest exact integer: no rounding up.
    expect(formatUsd(8_999_999_999_999_999)).toBe("8999999.999999999");
    expect(formatUsd(Number.MAX_SAFE_INTEGER)).toBe("9007199.254740991");
    expect(formatUsd(-1_500_000_000)).toBe("-1.5");
  });
});

// "Each cost line is rounded once": the cache-write line's 5-minute and 1-hour parts were each
// rounded, then added (found by review). At $0.0005 per 1M (half a nano-dollar per token), one
// token of each is exactly 1 nano-dollar, not 1 + 1.
describe("the cache-write line", () => {
  it("is summed exactly and rounded once", () => {
    const halfNano = ratesFromUsdPerMillion({ input: 1, output: 1, cacheWrite5m: 0.0005, cacheWrite1h: 0.0005 });
    expect(computeCost({ cacheWrite5mTokens: 1, cacheWrite1hTokens: 1 }, { rates: halfNano }).cacheWriteNano).toBe(1);
    // Rates with different divisors: 1/3 and 2/3 of a nano-dollar per token sum to exactly 1.
    const thirds = { ...halfNano, cacheWrite5m: { pico: 1000, perTokens: 3 }, cacheWrite1h: { pico: 2000, perTokens: 3 } };
    expect(computeCost({ cacheWrite5mTokens: 1, cacheWrite1hTokens: 1 }, { rates: thirds }).cacheWriteNano).toBe(1);
  });
});

// A usage object without prompt_tokens (a proxy's, or a server's that counts only what it
// generated) was read as 0 input tokens: the prompt billed at nothing, and not flagged estimated.
describe("OpenAI-shaped usage with a count left out", () => {
  it("leaves that count unknown, for the meter to count and flag", () => {
    expect(convertOpenAIUsage({ completion_tokens: 12 })).toEqual({ outputTokens: 12 });
    expect(convertOpenAIUsage({ prompt_tokens: 30, completion_tokens: null })).toEqual({ inputTokens: 30 });
    expect(convertOpenAIUsage({ prompt_tokens: 30, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 10 } })).toEqual({ inputTokens: 20, cacheReadTokens: 10, outputTokens: 12 });
  });
});
