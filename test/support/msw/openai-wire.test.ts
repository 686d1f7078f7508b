// Proves the provider mocks are faithful: the OFFICIAL SDKs, pointed straight at them, must parse
// every reply kind the way they parse the real APIs (content, usage, tool calls, errors, aborts).

import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import { thrownBy, useMockProviders, userMessage } from "./wire-test-kit.ts";

const OPENAI_URL = "https://api.openai.com/v1";

const { openai: openaiMock } = useMockProviders();

const openai = new OpenAI({ apiKey: "sk-test-openai", baseURL: OPENAI_URL, maxRetries: 0 });

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
