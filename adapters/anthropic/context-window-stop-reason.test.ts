import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { mapAnthropicResponse } from "./map-anthropic-response.ts";
import { mapAnthropicStream } from "./map-anthropic-stream.ts";
import { renderAnthropicResponse } from "../../src/dialects/anthropic/render-anthropic-response.ts";
import { fromAnthropicStopReason, toAnthropicStopReason, toOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";

// REFERENCE.md and @anthropic-ai/sdk's StopReason: "model_context_window_exceeded" is its own stop
// reason (the model ran out of CONTEXT WINDOW, not out of the request's max_tokens). An Anthropic
// client talking to Anthropic through tollgate is told "max_tokens" instead: fromAnthropicStopReason
// folds it into "length", and toAnthropicStopReason renders "length" as max_tokens. A client that
// reacts to max_tokens by asking for more tokens / "continue" keeps paying for a context that is full.

const message = {
  id: "msg_01X",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content: [{ type: "text", text: "…and so" }],
  stop_reason: "model_context_window_exceeded",
  stop_sequence: null,
  usage: { input_tokens: 199_000, output_tokens: 1000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation: null },
} as unknown as Anthropic.Messages.Message;

describe("Anthropic's model_context_window_exceeded, Anthropic client to Anthropic provider", () => {
  it("non-streamed: the client reads stop_reason model_context_window_exceeded", () => {
    expect(renderAnthropicResponse(mapAnthropicResponse(message)).stop_reason).toBe("model_context_window_exceeded");
  });

  it("streamed: message_delta says model_context_window_exceeded", async () => {
    async function* events() {
      yield { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } };
      yield { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } };
      yield { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "…and so" } };
      yield { type: "content_block_stop", index: 0 };
      yield { type: "message_delta", delta: { stop_reason: "model_context_window_exceeded", stop_sequence: null }, usage: { output_tokens: 1000 } };
      yield { type: "message_stop" };
    }
    let rendered: string | undefined;
    for await (const part of mapAnthropicStream(events() as AsyncIterable<Anthropic.Messages.RawMessageStreamEvent>)) {
      // What AnthropicStreamRenderer.end() puts in message_delta.stop_reason for this finish.
      if (part.type === "finish") rendered = toAnthropicStopReason(part.reason);
    }
    expect(rendered).toBe("model_context_window_exceeded");
  });
});

describe("the same finish, to an OpenAI client", () => {
  it("is \"length\", the only word Chat Completions has for an answer cut by its limits", () => {
    expect(toOpenAIFinishReason(fromAnthropicStopReason("model_context_window_exceeded"))).toBe("length");
    expect(toAnthropicStopReason(fromAnthropicStopReason("max_tokens"))).toBe("max_tokens");
  });
});
