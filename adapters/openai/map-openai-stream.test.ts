import { readFileSync } from "node:fs";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { mapOpenAIStream } from "./map-openai-stream.ts";

const fixture = (name: string): OpenAI.Chat.Completions.ChatCompletionChunk[] =>
  JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8"));

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe("mapOpenAIStream", () => {
  it("turns parallel tool-call deltas, the finish chunk and the usage chunk into parts", async () => {
    const parts = await collect(mapOpenAIStream(replay(fixture("parallel-tool-calls.chunks.json"))));
    expect(parts).toEqual([
      { type: "start", id: "chatcmpl-9x", model: "gpt-4o-2024-08-06", created: 1 },
      { type: "tool-call-start", index: 0, id: "call_a", name: "weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":' },
      { type: "tool-call-delta", index: 0, argumentsDelta: '"Oslo"}' },
      { type: "tool-call-start", index: 1, id: "call_b", name: "weather" },
      { type: "tool-call-delta", index: 1, argumentsDelta: '{"city":"Rome"}' },
      { type: "finish", reason: "tool-calls" },
      // 82 prompt tokens of which 64 cached: 18 uncached.
      // The other detail counts as they came, for OpenAI clients (not billed from).
      {
        type: "usage",
        usage: { inputTokens: 18, cacheReadTokens: 64, outputTokens: 40, reasoningTokens: 0 },
        openAIDetails: { prompt_tokens_details: { audio_tokens: 0 }, completion_tokens_details: { audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } },
      },
    ]);
  });

  it("keeps usage that arrives on a chunk that still has choices (some servers do this)", async () => {
    const chunk = {
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { content: "end" }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    } as OpenAI.Chat.Completions.ChatCompletionChunk;
    const parts = await collect(mapOpenAIStream(replay([chunk])));
    expect(parts.slice(1)).toEqual([
      { type: "text-delta", text: "end" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { inputTokens: 5, cacheReadTokens: 0, outputTokens: 1 } },
    ]);
  });

  it("reads a local decoder's thinking from whichever field it uses, once when a vLLM sends both", async () => {
    const chunk = (delta: object) => ({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] }) as OpenAI.Chat.Completions.ChatCompletionChunk;
    const parts = await collect(mapOpenAIStream(replay([chunk({ reasoning_content: "a" }), chunk({ reasoning: "b" }), chunk({ reasoning: "c", reasoning_content: "c" }), chunk({ content: "42" })])));
    expect(parts.slice(1)).toEqual([
      { type: "reasoning-delta", text: "a" },
      { type: "reasoning-delta", text: "b" },
      { type: "reasoning-delta", text: "c" },
      { type: "text-delta", text: "42" },
    ]);
  });
});
