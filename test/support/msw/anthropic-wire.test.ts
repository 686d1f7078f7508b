// Proves the provider mocks are faithful: the OFFICIAL SDKs, pointed straight at them, must parse
// every reply kind the way they parse the real APIs (content, usage, tool calls, errors, aborts).

import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it, vi } from "vitest";
import { thrownBy, useMockProviders, userMessage } from "./wire-test-kit.ts";

const ANTHROPIC_URL = "https://api.anthropic.com";

const { anthropic: anthropicMock } = useMockProviders();

const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: ANTHROPIC_URL, maxRetries: 0 });

/** The raw SSE frames of a response body, split on the blank line that ends each one. */
async function rawFrames(response: Response): Promise<string[]> {
  const text = await response.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text.slice(0, -2).split("\n\n");
}

describe("Anthropic mock through the official @anthropic-ai/sdk", () => {
  const params = { model: "claude-sonnet-4-6", max_tokens: 256, system: "Be brief.", messages: [userMessage] };

  it("answers a non-streaming request with a complete Message", async () => {
    const { data, response } = await anthropic.messages.create(params).withResponse();
    expect(data.id).toMatch(/^msg_01[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(data).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-6",
      content: [{ type: "text", text: "Hello from mock Anthropic." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
    });
    expect(data.usage).toEqual({
      input_tokens: 8,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: 4,
      service_tier: "standard",
      inference_geo: "global",
    });
    expect(response.headers.get("request-id")).toMatch(/^req_011C/);

    const [seen] = anthropicMock.requests;
    expect(seen?.url).toBe(`${ANTHROPIC_URL}/v1/messages`);
    // @anthropic-ai/sdk 1.x sends the key as a bearer token (the mock also takes `x-api-key`).
    expect(seen?.headers.authorization).toBe("Bearer sk-ant-test");
    expect(seen?.headers["anthropic-version"]).toBeTruthy();
    expect(seen?.body).toMatchObject({ model: "claude-sonnet-4-6", max_tokens: 256, system: "Be brief." });
  });

  it("streams the real event sequence, with output_tokens 1 in message_start and the total in message_delta", async () => {
    anthropicMock.enqueue({ kind: "text", chunks: ["One", " two", " three"], stopReason: "stop_sequence", stopSequence: "\n\nEND" });
    const stream = await anthropic.messages.create({ ...params, stream: true });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);

    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = events[0] as Anthropic.RawMessageStartEvent;
    expect(start.message.content).toEqual([]);
    expect(start.message.stop_reason).toBeNull();
    expect(start.message.usage.output_tokens).toBe(1);
    expect(start.message.usage.input_tokens).toBe(8);
    expect(events[1]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    const delta = events[6] as Anthropic.RawMessageDeltaEvent;
    expect(delta.delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "\n\nEND", stop_details: null });
    expect(delta.usage).toEqual({ input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 });
  });

  it("frames each event as event:/data: with a ping right after the first block opens", async () => {
    const response = await fetch(`${ANTHROPIC_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ ...params, stream: true }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const frames = await rawFrames(response);
    const names = frames.map((frame) => /^event: (\w+)\ndata: /.exec(frame)?.[1]);
    expect(names.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(names.at(-1)).toBe("message_stop");
    expect(frames[2]).toBe('event: ping\ndata: {"type": "ping"}');
    for (const frame of frames) expect(JSON.parse(frame.split("\ndata: ")[1]!)).toHaveProperty("type");
  });

  it("gives finalMessage() the scripted text and usage, cache fields included", async () => {
    const usage = {
      input_tokens: 13,
      output_tokens: 42,
      cache_read_input_tokens: 22000,
      cache_creation_input_tokens: 31,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 31 },
    };
    anthropicMock.enqueue({ kind: "text", text: "Cached answer from the prefix.", usage, delayMsBetweenChunks: 2 });
    const message = await anthropic.messages.stream(params).finalMessage();
    expect(message.content).toEqual([{ type: "text", text: "Cached answer from the prefix." }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ ...usage, service_tier: "standard" });
  });

  it("streams tool_use blocks whose input_json_delta pieces accumulate to the input", async () => {
    const input = { location: "Tokyo", requestedDate: "2026-01-15", nested: { hours: [9, 12] } };
    anthropicMock.enqueue({ kind: "tool-use", text: "Let me check.", blocks: [{ id: "toolu_01Weather", name: "get_weather", input }] });
    const stream = anthropic.messages.stream(params);
    const starts: unknown[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_start") starts.push(event.content_block);
    });
    const message = await stream.finalMessage();

    expect(starts).toEqual([{ type: "text", text: "" }, { type: "tool_use", id: "toolu_01Weather", name: "get_weather", input: {} }]);
    expect(message.content).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_01Weather", name: "get_weather", input },
    ]);
    expect(message.stop_reason).toBe("tool_use");

    anthropicMock.enqueue({ kind: "tool-use", blocks: [{ name: "get_weather", input }] });
    const plain = await anthropic.messages.create(params);
    expect(plain.content).toEqual([{ type: "tool_use", id: expect.stringMatching(/^toolu_01/), name: "get_weather", input }]);
  });

  it("surfaces 529 as OverloadedError and 429 as RateLimitError with retry-after", async () => {
    anthropicMock.enqueue({ kind: "http-error", status: 529 }, { kind: "http-error", status: 429, retryAfter: 12 });
    const overloaded = await thrownBy(() => anthropic.messages.create(params));
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toMatchObject({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(overloaded.requestID).toMatch(/^req_011C/);

    const limited = await thrownBy(() => anthropic.messages.create(params));
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers.get("retry-after")).toBe("12");
    expect(limited.error.error.type).toBe("rate_limit_error");
  });

  it("refuses a metadata.user_id that looks like an email or is over 256 characters, as Anthropic does", async () => {
    for (const user_id of ["alice@example.com", "u".repeat(257)]) {
      const refused = await thrownBy(() => anthropic.messages.create({ ...params, metadata: { user_id } }));
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
      expect(refused.error.error.message).toMatch(/^metadata\.user_id: /);
    }
    const taken = await anthropic.messages.create({ ...params, metadata: { user_id: "u".repeat(256) } });
    expect(taken.type).toBe("message");
  });

  it("throws mid-stream on an error event after HTTP 200", async () => {
    anthropicMock.enqueue({ kind: "stream-error", afterChunks: 2 });
    const stream = await anthropic.messages.create({ ...params, stream: true });
    let received = "";
    const error = await thrownBy(async () => {
      for await (const event of stream) {
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") received += event.delta.text;
      }
    });
    expect(received).toBe("chunk0 chunk1");
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.error).toMatchObject({ type: "error", error: { details: null, type: "overloaded_error", message: "Overloaded" } });
  });

  it("rejects a wrong key, and a request without anthropic-version, with the real bodies", async () => {
    const client = new Anthropic({ apiKey: "sk-ant-wrong", baseURL: ANTHROPIC_URL, maxRetries: 0 });
    const wrongKey = await thrownBy(() => client.messages.create(params));
    expect(wrongKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(wrongKey.error).toMatchObject({ type: "error", error: { type: "authentication_error", message: "Invalid bearer token" } });

    const wrongHeaderKey = await fetch(`${ANTHROPIC_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "sk-ant-wrong", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    expect(wrongHeaderKey.status).toBe(401);
    expect(await wrongHeaderKey.json()).toMatchObject({ error: { type: "authentication_error", message: "invalid x-api-key" } });

    const noVersion = await fetch(`${ANTHROPIC_URL}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "sk-ant-test", "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: "anthropic-version: header is required" },
      request_id: expect.stringMatching(/^req_/),
    });
    expect(anthropicMock.requests).toHaveLength(3);
  });

  it("keeps an endless stream going until the caller aborts, and records the abort", async () => {
    anthropicMock.enqueue({ kind: "endless", delayMsBetweenChunks: 5 });
    const controller = new AbortController();
    const stream = await anthropic.messages.create({ ...params, stream: true }, { signal: controller.signal });
    let text = "";
    for await (const event of stream) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      if (text.endsWith("tick3")) controller.abort();
    }
    expect(text).toBe("tick0 tick1 tick2 tick3");
    await vi.waitFor(() => expect(anthropicMock.requests[0]?.aborted).toBe(true));
  });

  it("records an abort when the consumer breaks out of the stream", async () => {
    anthropicMock.enqueue({ kind: "endless", delayMsBetweenChunks: 5 });
    const stream = await anthropic.messages.create({ ...params, stream: true });
    let events = 0;
    for await (const _event of stream) if (++events === 4) break;
    await vi.waitFor(() => expect(anthropicMock.requests[0]?.aborted).toBe(true));
  });
});
