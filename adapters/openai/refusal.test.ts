import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { mapOpenAIStream } from "../../adapters/openai/map-openai-stream.ts";
import { mapOpenAIResponse } from "../../adapters/openai/map-openai-response.ts";
import { renderOpenAIResponse } from "../../src/dialects/openai/render-openai-response.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { OpenAIStreamRenderer } from "../../src/dialects/openai/render-openai-stream.ts";
import { renderAnthropicResponse } from "../../src/dialects/anthropic/render-anthropic-response.ts";

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
});
