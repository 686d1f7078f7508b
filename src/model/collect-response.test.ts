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
    expect(JSON.parse(delta.slice(delta.indexOf("data: ") + 6)).delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "trois", stop_details: null });
  });
});

// A streamed answer that thought (kept by the response cache, replayed as parts) keeps Claude's
// signed blocks in order and whole, and a local decoder's unsigned thinking stays `reasoning` only.
describe("ResponseCollector keeps Claude's thinking blocks", () => {
  const thinking: StreamPart[] = [
    { type: "start", id: "msg_2", model: "claude-sonnet-4-6" },
    { type: "redacted-reasoning", data: "Encrypted==" },
    { type: "reasoning-delta", text: "Two and two", signed: true },
    { type: "reasoning-delta", text: " make four.", signed: true },
    { type: "reasoning-signature", signature: "sig-1" },
    { type: "reasoning-signature", signature: "sig-2" },
    { type: "text-delta", text: "4" },
    { type: "finish", reason: "stop" },
  ];

  it("rebuilds them, and replays them as the same parts", () => {
    const collector = new ResponseCollector();
    for (const part of thinking) collector.add(part);
    const response = collector.response();
    expect(response.content).toEqual([
      { type: "redacted-thinking", data: "Encrypted==" },
      { type: "thinking", text: "Two and two make four.", signature: "sig-1" },
      { type: "thinking", text: "", signature: "sig-2" },
      { type: "text", text: "4" },
    ]);
    expect(response.reasoning).toBe("Two and two make four.");
    expect([...responseToParts(response)].slice(0, 6)).toEqual([
      { type: "start", id: "msg_2", model: "claude-sonnet-4-6" },
      { type: "redacted-reasoning", data: "Encrypted==" },
      { type: "reasoning-delta", text: "Two and two make four.", signed: true },
      { type: "reasoning-signature", signature: "sig-1" },
      { type: "reasoning-signature", signature: "sig-2" },
      { type: "text-delta", text: "4" },
    ]);
  });

  it("keeps a local decoder's thinking as reasoning only", () => {
    const collector = new ResponseCollector();
    for (const part of [{ type: "reasoning-delta", text: "hmm" }, { type: "text-delta", text: "ok" }] as StreamPart[]) collector.add(part);
    expect(collector.response()).toMatchObject({ reasoning: "hmm", content: [{ type: "text", text: "ok" }] });
  });
});

describe("ResponseCollector keeps the blocks in the order they came", () => {
  it("thinking, a tool call, thinking again, then text: as Claude sent them, for a later turn to send back", () => {
    const collector = new ResponseCollector();
    const interleaved: StreamPart[] = [
      { type: "reasoning-delta", text: "Look it up.", signed: true },
      { type: "reasoning-signature", signature: "sig-A" },
      { type: "tool-call-start", index: 0, id: "toolu_01", name: "get_weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":"Paris"}' },
      { type: "reasoning-delta", text: "It rains.", signed: true },
      { type: "reasoning-signature", signature: "sig-B" },
      { type: "text-delta", text: "Rain" },
      { type: "text-delta", text: " in Paris." },
    ];
    for (const part of interleaved) collector.add(part);
    expect(collector.response().content).toEqual([
      { type: "thinking", text: "Look it up.", signature: "sig-A" },
      { type: "tool-call", id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "thinking", text: "It rains.", signature: "sig-B" },
      { type: "text", text: "Rain in Paris." },
    ]);
  });
});

describe("ResponseCollector with an answer in several text blocks", () => {
  it("keeps them apart, as the answer not streamed has them (a cached replay gives them back so)", () => {
    const collector = new ResponseCollector();
    const blocks: StreamPart[] = [
      { type: "start", id: "msg_1", model: "claude-sonnet-4-6" },
      { type: "text-delta", text: "First " },
      { type: "text-delta", text: "paragraph." },
      { type: "text-delta", text: "Second paragraph.", newBlock: true },
      { type: "finish", reason: "stop" },
    ];
    for (const part of blocks) collector.add(part);
    expect(collector.response().content).toEqual([
      { type: "text", text: "First paragraph." },
      { type: "text", text: "Second paragraph." },
    ]);
  });

  it("a cached answer replayed as a stream keeps them apart too", () => {
    const again = new ResponseCollector();
    const cached = { id: "msg_1", model: "claude-sonnet-4-6", content: [{ type: "text" as const, text: "First paragraph." }, { type: "text" as const, text: "Second paragraph." }], finishReason: "stop" as const };
    for (const part of responseToParts(cached as Parameters<typeof responseToParts>[0])) again.add(part);
    expect(again.response().content).toEqual(cached.content);
  });
});

describe("ResponseCollector with OpenAI's usage details", () => {
  it("keeps them, and a cached answer replayed as a stream gives them back", () => {
    const openAIDetails = { completion_tokens_details: { accepted_prediction_tokens: 18, rejected_prediction_tokens: 7 } };
    const collector = new ResponseCollector();
    for (const part of [
      { type: "start", id: "chatcmpl-1", model: "gpt-4o" },
      { type: "text-delta", text: "x = 2" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { inputTokens: 9, outputTokens: 30 }, openAIDetails },
    ] satisfies StreamPart[]) collector.add(part);
    const cached = collector.response();
    expect(cached.openAIUsageDetails).toEqual(openAIDetails);
    expect([...responseToParts(cached)].at(-1)).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 30 }, openAIDetails });
  });
});

describe("ResponseCollector with OpenAI's annotations", () => {
  it("keeps a search model's citations, and a cached answer replayed as a stream gives them back", () => {
    const annotations = [{ type: "url_citation", url_citation: { start_index: 0, end_index: 5, title: "Paris", url: "https://example.com/" } }];
    const collector = new ResponseCollector();
    for (const part of [
      { type: "start", id: "chatcmpl-1", model: "gpt-4o-search-preview" },
      { type: "text-delta", text: "Paris" },
      { type: "annotations", annotations },
      { type: "finish", reason: "stop" },
    ] satisfies StreamPart[]) collector.add(part);
    const cached = collector.response();
    expect(cached.annotations).toEqual(annotations);
    expect([...responseToParts(cached)]).toContainEqual({ type: "annotations", annotations });
  });
});
