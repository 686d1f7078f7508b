// Proves the provider mocks are faithful: the OFFICIAL SDKs, pointed straight at them, must parse
// every reply kind the way they parse the real APIs (content, usage, tool calls, errors, aborts).

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { startMockProviders } from "./index.ts";

const OPENAI_URL = "https://api.openai.com/v1";
const ANTHROPIC_URL = "https://api.anthropic.com";

const providers = startMockProviders();
const { openai: openaiMock, anthropic: anthropicMock } = providers;
afterEach(() => {
  openaiMock.reset();
  anthropicMock.reset();
});
afterAll(() => providers.close());

const openai = new OpenAI({ apiKey: "sk-test-openai", baseURL: OPENAI_URL, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: ANTHROPIC_URL, maxRetries: 0 });

const userMessage = { role: "user" as const, content: "Say hello to the test suite" }; // 6 words

/** Runs `fn` and returns what it threw (failing the test if it did not throw). */
async function thrownBy(fn: () => Promise<unknown>): Promise<any> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** The raw SSE frames of a response body, split on the blank line that ends each one. */
async function rawFrames(response: Response): Promise<string[]> {
  const text = await response.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text.slice(0, -2).split("\n\n");
}

describe("OpenAI mock through the official openai SDK", () => {
  it("answers a non-streaming request with a complete chat.completion", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "system", content: "Be brief." }, userMessage] })
      .withResponse();

    expect(data.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("gpt-4o");
    expect(data.choices).toEqual([
      {
        index: 0,
        message: { role: "assistant", content: "Hello from mock OpenAI.", refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      },
    ]);
    expect(data.usage).toEqual({
      prompt_tokens: 8, // "Be brief." + "Say hello to the test suite"
      completion_tokens: 4,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    expect(data.service_tier).toBe("default");
    expect(data.system_fingerprint).toMatch(/^fp_[0-9a-f]{10}$/);
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(Number(response.headers.get("openai-processing-ms"))).toBeGreaterThan(0);

    expect(openaiMock.requests).toHaveLength(1);
    const [seen] = openaiMock.requests;
    expect(seen?.url).toBe(`${OPENAI_URL}/chat/completions`);
    expect(seen?.headers.authorization).toBe("Bearer sk-test-openai");
    expect(seen?.body).toMatchObject({ model: "gpt-4o", messages: [{ role: "system" }, userMessage] });
    expect(seen?.aborted).toBe(false);
  });

  it("streams with include_usage: usage null on every chunk, then a choices:[] usage chunk", async () => {
    openaiMock.enqueue({
      kind: "text",
      chunks: ["Cached", " answer", " here"],
      usage: { prompt_tokens: 2006, completion_tokens: 3, cached_tokens: 1920 },
      model: "gpt-4o-2024-08-06",
    });
    const stream = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [userMessage],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "", refusal: null });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Cached answer here");
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0]?.id)).toBe(true);
    expect(chunks.every((c) => c.model === "gpt-4o-2024-08-06")).toBe(true);

    const finish = chunks.at(-2);
    expect(finish?.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
    expect(chunks.slice(0, -1).every((c) => "usage" in c && c.usage === null)).toBe(true);

    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toMatchObject({
      prompt_tokens: 2006,
      completion_tokens: 3,
      total_tokens: 2009,
      prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
    });
  });

  it("streams without include_usage: no usage key and no usage chunk at all", async () => {
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage], stream: true });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks.some((c) => "usage" in c)).toBe(false);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello from mock OpenAI.");
  });

  it("frames the stream as data: lines ending in [DONE], one chunk at a time with the scripted delays", async () => {
    openaiMock.enqueue({ kind: "text", chunks: ["a", "b", "c", "d"], delayMsBetweenChunks: 40 });
    const response = await fetch(`${OPENAI_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-test-openai", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [userMessage], stream: true }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");

    const arrivals: number[] = [];
    const reader = response.body!.getReader();
    let text = "";
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      arrivals.push(Date.now());
      text += new TextDecoder().decode(read.value);
    }
    const frames = text.slice(0, -2).split("\n\n");
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(frames.slice(0, -1).every((f) => f.startsWith("data: {") && !f.includes("\n"))).toBe(true);
    // 7 frames (role, 4 content, finish, [DONE]), each its own body chunk, 40 ms apart.
    expect(arrivals).toHaveLength(7);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(200);
    // Real chunks carry a random `obfuscation` padding unless include_obfuscation is false.
    expect(JSON.parse(frames[0]!.slice(6)).obfuscation).toEqual(expect.any(String));
  });

  it("streams tool calls as index/id/name openings then argument pieces that accumulate to the JSON", async () => {
    const calls = [
      { id: "call_weather", name: "get_weather", arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
      { id: "call_time", name: "get_time", arguments: '{"timezone":"America/Los_Angeles"}' },
    ];
    openaiMock.enqueue({ kind: "tool-calls", calls });
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage], stream: true });
    const accumulated: { id?: string; name?: string; arguments: string }[] = [];
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const call = (accumulated[delta.index] ??= { arguments: "" });
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? "";
      }
    }
    expect(chunks[0]?.choices[0]?.delta).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: "call_weather", type: "function", function: { name: "get_weather", arguments: "" } }],
      refusal: null,
    });
    expect(chunks[1]?.choices[0]?.delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"lo' } }] });
    expect(accumulated).toEqual(calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })));
    expect(JSON.parse(accumulated[0]!.arguments)).toEqual({ location: "San Francisco, CA", unit: "celsius" });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");

    // The SDK's own accumulator agrees.
    openaiMock.enqueue({ kind: "tool-calls", calls });
    const final = await openai.chat.completions.stream({ model: "gpt-4o", messages: [userMessage] }).finalChatCompletion();
    expect(final.choices[0]?.message.tool_calls).toEqual(calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })));
  });

  it("returns tool calls in a non-streaming completion with content null", async () => {
    openaiMock.enqueue({ kind: "tool-calls", calls: [{ name: "lookup", arguments: '{"q":"x"}' }] });
    const completion = await openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage] });
    const message = completion.choices[0]?.message;
    expect(message?.content).toBeNull();
    expect(message?.tool_calls?.[0]).toMatchObject({ type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } });
    expect(message?.tool_calls?.[0]?.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("surfaces a 429 as RateLimitError with retry-after and rate_limit_exceeded", async () => {
    openaiMock.enqueue({ kind: "http-error", status: 429, retryAfter: 7 });
    const error = await thrownBy(() => openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage] }));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.headers.get("retry-after")).toBe("7");
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.type).toBe("tokens");
    expect(error.message).toContain("Rate limit reached for gpt-4o");
  });

  it("surfaces 500 and 503 as InternalServerError", async () => {
    openaiMock.enqueue({ kind: "http-error", status: 500 }, { kind: "http-error", status: 503 });
    const first = await thrownBy(() => openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage] }));
    const second = await thrownBy(() => openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage] }));
    expect(first).toBeInstanceOf(OpenAI.InternalServerError);
    expect(first.type).toBe("server_error");
    expect(second).toBeInstanceOf(OpenAI.InternalServerError);
    expect(second.status).toBe(503);
  });

  it("rejects a wrong key with OpenAI's 401, which echoes the key partly masked", async () => {
    const wrongKey = "sk-proj-wrongkey1234567890abcd";
    const client = new OpenAI({ apiKey: wrongKey, baseURL: OPENAI_URL, maxRetries: 0 });
    const error = await thrownBy(() => client.chat.completions.create({ model: "gpt-4o", messages: [userMessage] }));
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.code).toBe("invalid_api_key");
    expect(error.message).toContain("Incorrect API key provided: sk-proj-******************abcd.");
    expect(error.message).not.toContain(wrongKey);

    const missing = await fetch(`${OPENAI_URL}/chat/completions`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ error: { type: "invalid_request_error", code: null, param: null } });
  });

  it("throws an APIError mid-iteration when the stream carries an error event", async () => {
    openaiMock.enqueue({ kind: "stream-error", afterChunks: 2, message: "The model crashed mid-answer." });
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage], stream: true });
    let received = "";
    const error = await thrownBy(async () => {
      for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
    });
    expect(received).toBe("chunk0 chunk1");
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.message).toContain("The model crashed mid-answer.");
    expect(error.type).toBe("server_error");
  });

  it("keeps an endless stream going until the caller aborts, and records the abort", async () => {
    openaiMock.enqueue({ kind: "endless", delayMsBetweenChunks: 5 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: "gpt-4o", messages: [userMessage], stream: true },
      { signal: controller.signal },
    );
    let contentChunks = 0;
    // The SDK ends the iteration quietly when its caller aborts.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) contentChunks++;
      if (contentChunks === 5) controller.abort();
    }
    expect(contentChunks).toBe(5);
    await vi.waitFor(() => expect(openaiMock.requests[0]?.aborted).toBe(true));
  });

  it("leaves a non-streaming endless request unanswered until the client times out", async () => {
    openaiMock.enqueue({ kind: "endless", delayMsBetweenChunks: 5 });
    const error = await thrownBy(() =>
      openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage] }, { timeout: 150 }),
    );
    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(openaiMock.requests[0]?.aborted).toBe(true);
  });

  it("records an abort when the consumer just stops reading (SDK aborts on break)", async () => {
    openaiMock.enqueue({ kind: "endless", delayMsBetweenChunks: 5 });
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [userMessage], stream: true });
    let seen = 0;
    for await (const _chunk of stream) if (++seen === 3) break;
    await vi.waitFor(() => expect(openaiMock.requests[0]?.aborted).toBe(true));
  });
});

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
    expect(delta.delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "\n\nEND" });
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
