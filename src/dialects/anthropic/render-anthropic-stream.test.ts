import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/gateway-error.ts";
import type { StreamPart } from "../../model/stream-part.ts";
import { AnthropicStreamRenderer } from "./render-anthropic-stream.ts";

const summary = { requestId: "req_1", route: "gpt", provider: "openai", model: "gpt-4o", inputTokens: 30, outputTokens: 9, reasoningTokens: 0, cachedTokens: 20, costUsd: "0.000123", cacheSavingsUsd: "0", policies: [], ttftMs: 12.5, estimated: false, unpriced: false };

function events(text: string) {
  return text
    .trim()
    .split("\n\n")
    .filter((block) => !block.startsWith(":")) // the summary comment: not an event
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1] ?? null;
      return { name, data: JSON.parse(block.slice(block.indexOf("data: ") + 6)) };
    });
}

describe("AnthropicStreamRenderer", () => {
  it("opens one content block per text run and per tool call, and closes each before the next", () => {
    const renderer = new AnthropicStreamRenderer();
    const parts: StreamPart[] = [
      { type: "start", id: "chatcmpl-1", model: "gpt-4o" },
      { type: "text-delta", text: "Two lookups." },
      { type: "tool-call-start", index: 0, id: "call_a", name: "weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":"Oslo"}' },
      { type: "tool-call-start", index: 1, id: "call_b", name: "weather" },
      { type: "tool-call-delta", index: 1, argumentsDelta: '{"city":"Rome"}' },
      { type: "finish", reason: "tool-calls" },
      { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 20, outputTokens: 9 } },
    ];
    const text = parts.map((part) => renderer.render(part)).join("") + renderer.end(summary);
    const out = events(text);
    expect(out.map((event) => [event.name, event.data.index ?? null])).toEqual([
      ["message_start", null],
      ["content_block_start", 0],
      ["content_block_delta", 0],
      ["content_block_stop", 0],
      ["content_block_start", 1],
      ["content_block_delta", 1],
      ["content_block_stop", 1],
      ["content_block_start", 2],
      ["content_block_delta", 2],
      ["content_block_stop", 2],
      ["message_delta", null],
      ["message_stop", null],
    ]);
    expect(out[4]!.data.content_block).toEqual({ type: "tool_use", id: "call_a", name: "weather", input: {} });
    expect(out[8]!.data.delta).toEqual({ type: "input_json_delta", partial_json: '{"city":"Rome"}' });
    expect(out[10]!.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null, stop_details: null },
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 20,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 9,
        output_tokens_details: null,
      },
    });
    expect(text.endsWith(`: tollgate ${JSON.stringify(summary)}\n\n`)).toBe(true);
  });

  it("ends a failed stream with `event: error` and after it only the summary comment", () => {
    const renderer = new AnthropicStreamRenderer();
    renderer.render({ type: "start", id: "m", model: "m" });
    const text = renderer.render({ type: "text-delta", text: "par" }) + renderer.error(new GatewayError("unavailable", 'provider "x" is overloaded: Overloaded'));
    expect(events(text).at(-1)).toEqual({ name: "error", data: { type: "error", error: { type: "overloaded_error", message: 'provider "x" is overloaded: Overloaded' } } });
    expect(renderer.end(summary)).toBe(`: tollgate ${JSON.stringify(summary)}\n\n`);
  });
});

describe("AnthropicStreamRenderer with a decoder that sends no id", () => {
  // Was: "msg_tollgate" on every such answer, one message to an app that keeps answers by id.
  it("message_start has an id all the same (the SDKs keep it as the message's id), one of its own per answer", () => {
    const ids = [1, 2].map(() => {
      const renderer = new AnthropicStreamRenderer();
      const out = events(renderer.render({ type: "start", id: "", model: "tiny" }) + renderer.render({ type: "text-delta", text: "hi" }));
      return out[0]!.data.message.id as string;
    });
    expect(ids[0]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(ids[1]).not.toBe(ids[0]);
  });
});

describe("AnthropicStreamRenderer with an answer in several text blocks", () => {
  it("opens a new text block where a text part says it begins one", () => {
    const renderer = new AnthropicStreamRenderer();
    const parts: StreamPart[] = [
      { type: "start", id: "msg_1", model: "claude-sonnet-4-6" },
      { type: "text-delta", text: "First paragraph." },
      { type: "text-delta", text: "Second paragraph.", newBlock: true },
    ];
    const out = events(parts.map((part) => renderer.render(part)).join(""));
    expect(out.filter((event) => event.name === "content_block_start").map((event) => event.data.index)).toEqual([0, 1]);
    expect(out.filter((event) => event.name === "content_block_delta").map((event) => [event.data.index, event.data.delta.text])).toEqual([
      [0, "First paragraph."],
      [1, "Second paragraph."],
    ]);
  });
});
