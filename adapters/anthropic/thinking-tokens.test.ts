import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { convertAnthropicUsage } from "./convert-anthropic-usage.ts";
import { mapAnthropicResponse } from "./map-anthropic-response.ts";
import { mapAnthropicStream } from "./map-anthropic-stream.ts";
import { mergeUsage, type Usage } from "../../src/model/usage.ts";

// @anthropic-ai/sdk 1.12 (the version installed) types Usage and MessageDeltaUsage with
// `output_tokens_details: { thinking_tokens }`: "Number of output tokens the model generated as
// internal reasoning … Always ≤ output_tokens" (resources/messages/messages.d.ts, OutputTokensDetails).
// convertAnthropicUsage reads only output_tokens, so a Claude answer that thought is recorded with
// reasoningTokens 0: the record's reasoning column, gen_ai.usage.reasoning.output_tokens and an
// OpenAI client's completion_tokens_details.reasoning_tokens all say 0.

describe("Anthropic thinking tokens", () => {
  it("a Message's output_tokens_details.thinking_tokens becomes reasoningTokens", () => {
    const usage = convertAnthropicUsage({ input_tokens: 20, output_tokens: 900, output_tokens_details: { thinking_tokens: 750 } } as never);
    expect(usage.reasoningTokens).toBe(750);
  });

  it("a stream's message_delta carries it too", async () => {
    async function* events() {
      yield { type: "message_start", message: { id: "msg_01X", type: "message", role: "assistant", model: "claude-opus-4-7", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens_details: null } } };
      yield { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } };
      yield { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCkYIBxgCKkA" } };
      yield { type: "content_block_stop", index: 0 };
      yield { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } };
      yield { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "42" } };
      yield { type: "content_block_stop", index: 1 };
      yield { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { input_tokens: 20, output_tokens: 900, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens_details: { thinking_tokens: 750 }, server_tool_use: null } };
      yield { type: "message_stop" };
    }
    let usage: Usage | undefined;
    for await (const part of mapAnthropicStream(events() as AsyncIterable<Anthropic.Messages.RawMessageStreamEvent>)) if (part.type === "usage") usage = mergeUsage(usage, part.usage);
    expect(usage).toMatchObject({ outputTokens: 900, reasoningTokens: 750 });
  });
});

// Claude's thinking text is output it generated: the stream carries it as signed reasoning-delta
// parts closed by the block's signature (a sign of life for the stream's idle deadline, and
// counted when a cut stream reports no usage), and a whole answer as its signed thinking block
// plus `reasoning`, the text OpenAI clients get.
// Used to be wrong: thinking_delta events and thinking blocks were dropped.
describe("Claude's thinking text", () => {
  const thinkingStream = async function* () {
    yield { type: "message_start", message: { id: "msg_01T", type: "message", role: "assistant", model: "claude-opus-4-7", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } };
    yield { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } };
    yield { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Six times seven" } };
    yield { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: " is 42." } };
    yield { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCkYIBxgCKkA" } };
    yield { type: "content_block_stop", index: 0 };
    yield { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } };
    yield { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "42" } };
  };

  it("streams as signed reasoning-delta parts and their signature, before the answer's text", async () => {
    const parts = [];
    for await (const part of mapAnthropicStream(thinkingStream() as AsyncIterable<Anthropic.Messages.RawMessageStreamEvent>)) parts.push(part);
    expect(parts.filter((part) => part.type !== "start" && part.type !== "usage")).toEqual([
      { type: "reasoning-delta", text: "Six times seven", signed: true },
      { type: "reasoning-delta", text: " is 42.", signed: true },
      { type: "reasoning-signature", signature: "EqQBCkYIBxgCKkA" },
      { type: "text-delta", text: "42" },
    ]);
  });

  it("is a whole answer's reasoning", () => {
    const message = {
      id: "msg_01T",
      type: "message",
      role: "assistant",
      model: "claude-opus-4-7",
      content: [
        { type: "thinking", thinking: "Six times seven is 42.", signature: "EqQBCkYIBxgCKkA" },
        { type: "text", text: "42" },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 30 },
    } as unknown as Anthropic.Messages.Message;
    expect(mapAnthropicResponse(message)).toMatchObject({
      reasoning: "Six times seven is 42.",
      content: [
        { type: "thinking", text: "Six times seven is 42.", signature: "EqQBCkYIBxgCKkA" },
        { type: "text", text: "42" },
      ],
    });
  });
});
