import { describe, expect, it } from "vitest";
import { ResponseCollector, responseToParts } from "./collect-response.ts";
import type { StreamPart } from "./stream-part.ts";
import { AnthropicStreamRenderer } from "../dialects/anthropic/render-anthropic-stream.ts";
import { renderAnthropicResponse } from "../dialects/anthropic/render-anthropic-response.ts";

// A streamed answer that ended on a stop sequence is kept in the response cache through
// ResponseCollector. The Anthropic SDK types say stop_sequence is "a non-null string if one of
// your custom stop sequences was generated" (Message.stop_sequence); a cache hit must say the same.

const parts: StreamPart[] = [
  { type: "start", id: "msg_1", model: "claude-sonnet-4-6" },
  { type: "text-delta", text: "Un, deux" },
  { type: "finish", reason: "stop-sequence", stopSequence: "trois" },
  { type: "usage", usage: { inputTokens: 9, outputTokens: 2 } },
];

describe("ResponseCollector keeps the stop sequence", () => {
  it("response() carries stopSequence", () => {
    const collector = new ResponseCollector();
    for (const part of parts) collector.add(part);
    expect(collector.response().stopSequence).toBe("trois");
  });

  it("a cached answer replayed to an Anthropic client names the stop sequence (non-stream and stream)", () => {
    const collector = new ResponseCollector();
    for (const part of parts) collector.add(part);
    const cached = collector.response();
    expect(renderAnthropicResponse(cached)).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "trois" });

    const renderer = new AnthropicStreamRenderer();
    let text = "";
    for (const part of responseToParts(cached)) text += renderer.render(part);
    text += renderer.end({ requestId: "r", route: "claude", provider: "anthropic", model: "m", inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0, costUsd: "0", cacheSavingsUsd: "0", policies: [], ttftMs: null, estimated: false, unpriced: false });
    const delta = text.split("\n\n").find((block) => block.startsWith("event: message_delta"))!;
    expect(JSON.parse(delta.slice(delta.indexOf("data: ") + 6)).delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "trois" });
  });
});
