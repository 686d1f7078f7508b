import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { mapOpenAIStream } from "../../adapters/openai/map-openai-stream.ts";
import { mapOpenAIResponse } from "../../adapters/openai/map-openai-response.ts";
import { renderOpenAIResponse } from "../../src/dialects/openai/render-openai-response.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { OpenAIStreamRenderer } from "../../src/dialects/openai/render-openai-stream.ts";
import { renderAnthropicResponse } from "../../src/dialects/anthropic/render-anthropic-response.ts";
import { ResponseCollector, responseToParts } from "../../src/model/collect-response.ts";

// OpenAI structured outputs can refuse: ChatCompletionMessage.refusal (non-stream) and
// ChatCompletionChunk.Choice.Delta.refusal (stream) in node_modules/openai/.../completions.d.ts.
// The SDK's ChatCompletionStream accumulates delta.refusal into message.refusal.

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

const chunk = (delta: object, finish: string | null = null) =>
  ({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] }) as unknown as OpenAI.Chat.Completions.ChatCompletionChunk;

/** A non-streamed answer that refused (structured outputs). */
const refused = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o",
  choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: null, refusal: "I can't help with that." } }],
} as unknown as OpenAI.Chat.Completions.ChatCompletion;

describe("OpenAI refusals", () => {
  it("a streamed refusal reaches the client (mapOpenAIStream)", async () => {
    const parts: StreamPart[] = [];
    for await (const part of mapOpenAIStream(replay([chunk({ role: "assistant", content: null, refusal: "" }), chunk({ refusal: "I can't help with that." }), chunk({}, "stop")]))) parts.push(part);
    expect(parts.filter((part) => part.type === "text-delta")).toEqual([{ type: "text-delta", text: "I can't help with that.", refusal: true }]);
    const renderer = new OpenAIStreamRenderer(false);
    const rendered = parts.map((part) => renderer.render(part)).join("");
    expect(rendered).toContain('"delta":{"refusal":"I can\'t help with that."}');
  });

  it("an OpenAI client still finds a non-streamed refusal in message.refusal, not in content", () => {
    const message = renderOpenAIResponse(mapOpenAIResponse(refused, "openai")).choices[0]!.message;
    expect(message.refusal).toBe("I can't help with that.");
    expect(message.content).toBeNull();
  });

  it("an Anthropic client reads a refusal as the answer's text", () => {
    expect(renderAnthropicResponse(mapOpenAIResponse(refused, "openai")).content).toEqual([{ type: "text", text: "I can't help with that." }]);
  });

  // The SDK's Choice.Logprobs: `content` ("message content tokens") and `refusal` ("message
  // refusal tokens"). Was: a refusal's came back as `logprobs: null`.
  describe("with log probabilities asked for", () => {
    const token = (text: string, logprob: number) => ({ token: text, logprob, bytes: [...Buffer.from(text)], top_logprobs: [] });
    const tokens = [token("I can't", -0.01), token(" help", -0.02)];

    it("an answer not streamed keeps the refusal's under logprobs.refusal", () => {
      const withLogprobs = { ...refused, choices: [{ ...refused.choices[0]!, logprobs: { content: null, refusal: tokens } }] } as OpenAI.Chat.Completions.ChatCompletion;
      expect(renderOpenAIResponse(mapOpenAIResponse(withLogprobs, "openai")).choices[0]!.logprobs).toEqual({ content: null, refusal: tokens });
    });

    it("a streamed refusal carries them on its chunk, under refusal, and a cached replay keeps them", async () => {
      const refusing = { ...chunk({ refusal: "I can't help" }), choices: [{ index: 0, delta: { refusal: "I can't help" }, finish_reason: null, logprobs: { content: null, refusal: tokens } }] } as unknown as OpenAI.Chat.Completions.ChatCompletionChunk;
      const parts: StreamPart[] = [];
      for await (const part of mapOpenAIStream(replay([chunk({ role: "assistant", content: null, refusal: "" }), refusing, chunk({}, "stop")]))) parts.push(part);
      const rendered = (renderer: OpenAIStreamRenderer, from: Iterable<StreamPart>) => [...from].map((part) => renderer.render(part)).join("");
      const logprobsOf = (sse: string) => sse.split("\n\n").filter((frame) => frame.includes('"refusal":"I can')).map((frame) => JSON.parse(frame.slice(6)).choices[0].logprobs);
      expect(logprobsOf(rendered(new OpenAIStreamRenderer(false), parts))).toEqual([{ content: null, refusal: tokens }]);
      const collector = new ResponseCollector();
      for (const part of parts) collector.add(part);
      expect(collector.response().refusalLogprobs).toEqual(tokens);
      expect(logprobsOf(rendered(new OpenAIStreamRenderer(false), responseToParts(collector.response())))).toEqual([{ content: null, refusal: tokens }]);
    });
  });
});
