import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { mapAnthropicStream } from "../../adapters/anthropic/map-anthropic-stream.ts";
import { mapAnthropicResponse } from "../../adapters/anthropic/map-anthropic-response.ts";
import { OpenAIStreamRenderer } from "../../src/dialects/openai/render-openai-stream.ts";

// A Claude tool call with no arguments: content_block_start carries `input: {}` and no non-empty
// input_json_delta follows (the Anthropic SDK's MessageStream then keeps input = {}). Non-streamed,
// tollgate gives an OpenAI client arguments "{}"; streamed, it gives "" — and OpenAI clients
// JSON.parse(function.arguments) (the openai SDK's runTools / parsed tool calls do too).

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

const events = [
  { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "get_time", input: {} } },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 12 } },
  { type: "message_stop" },
] as unknown as Anthropic.Messages.RawMessageStreamEvent[];

describe("Anthropic no-argument tool call, streamed to an OpenAI client", () => {
  it("the streamed arguments parse as JSON, as the non-streamed ones do", async () => {
    const renderer = new OpenAIStreamRenderer(false);
    let sse = "";
    for await (const part of mapAnthropicStream(replay(events))) sse += renderer.render(part);
    let args = "";
    for (const block of sse.split("\n\n")) {
      if (!block.startsWith("data: ")) continue;
      const data = JSON.parse(block.slice(6));
      for (const call of data.choices?.[0]?.delta?.tool_calls ?? []) args += call.function?.arguments ?? "";
    }
    const nonStreamed = mapAnthropicResponse({ id: "msg_1", type: "message", role: "assistant", model: "m", content: [{ type: "tool_use", id: "toolu_1", name: "get_time", input: {} }], stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } as unknown as Anthropic.Messages.Message);
    expect((nonStreamed.content[0] as { arguments: string }).arguments).toBe("{}");
    expect(args).toBe("{}");
    expect(() => JSON.parse(args)).not.toThrow();
  });
});
