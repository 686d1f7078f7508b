import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { APP_KEY, readSseEvents, startTestGateway, testConfig, useMockedGateway, waitForRecord } from "./support/gateway.ts";
import { startGateway } from "../src/node/serve.ts";
import { until } from "./support/until.ts";

// What streaming must get right beyond the happy path: no buffering, client disconnects stop
// the upstream, failures mid-stream reach the client as errors, and fallback before commit.

const rig = useMockedGateway();

/** Reads an OpenAI SDK stream to its end or its error: the text that came, and what it threw. */
async function readUntilFailure(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ text: string; failure: unknown }> {
  let text = "";
  try {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  } catch (error) {
    return { text, failure: error };
  }
  return { text, failure: undefined };
}

function postStream(path: string, body: object, signal: AbortSignal) {
  return fetch(`${rig.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
}

describe.each([
  { provider: "openai", route: "gpt", mock: () => rig.mocks.openai },
  { provider: "anthropic", route: "claude", mock: () => rig.mocks.anthropic },
])("streams from $provider", ({ route, mock }) => {
  it("delivers content while the upstream is still generating (nothing buffered)", async () => {
    mock().enqueue({ kind: "endless", delayMsBetweenChunks: 20 });
    const client = new AbortController();
    const response = await postStream("/v1/chat/completions", { model: route, max_tokens: 10, messages: [{ role: "user", content: "go" }] }, client.signal);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = "";
    while (!received.includes("tick0")) received += decoder.decode((await reader.read()).value);
    // The upstream never finishes, so this content can only have come through unbuffered.
    expect(mock().requests[0]!.aborted).toBe(false);
    client.abort();
  });

  it("aborts the upstream request when the client disconnects", async () => {
    mock().enqueue({ kind: "endless", delayMsBetweenChunks: 20 });
    const client = new AbortController();
    const response = await postStream("/v1/messages", { model: route, max_tokens: 10, messages: [{ role: "user", content: "go" }] }, client.signal);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    client.abort();
    await until(() => mock().requests[0]!.aborted, "the upstream request to be aborted");
    expect(mock().requests[0]!.aborted).toBe(true);
  });
});

describe("a client that leaves", () => {
  it("is not a reason to call the route's next provider", async () => {
    rig.mocks.openai.enqueue({ kind: "endless", delayMsBetweenChunks: 20 });
    const client = new AbortController();
    const pending = fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-then-claude", messages: [{ role: "user", content: "go" }] }),
      signal: client.signal,
    }).catch((error: unknown) => error);
    await until(() => rig.mocks.openai.requests.length === 1, "the first target to be called");
    client.abort();
    await pending;
    await until(() => rig.mocks.openai.requests[0]!.aborted, "the first call to be aborted");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});

describe("a non-streaming request", () => {
  it("aborts its upstream call when the client disconnects while waiting", async () => {
    rig.mocks.anthropic.enqueue({ kind: "endless", delayMsBetweenChunks: 20 });
    const client = new AbortController();
    const pending = fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY },
      body: JSON.stringify({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: "go" }] }),
      signal: client.signal,
    }).catch(() => "client aborted");
    await until(() => rig.mocks.anthropic.requests.length === 1, "the upstream request to start");
    client.abort();
    expect(await pending).toBe("client aborted");
    await until(() => rig.mocks.anthropic.requests[0]!.aborted, "the upstream request to be aborted");
  });
});

describe("an upstream failure mid-stream reaches the client as an error in its dialect", () => {
  it("OpenAI client, OpenAI upstream: the SDK throws after the content it got", async () => {
    rig.mocks.openai.enqueue({ kind: "stream-error", afterChunks: 2, message: "The server had an error while processing your request." });
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }], stream: true });
    const { text, failure } = await readUntilFailure(stream);
    expect(text).toBe("chunk0 chunk1");
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('provider "openai" failed mid-stream: The server had an error');
  });

  it("Anthropic client, OpenAI upstream: an `event: error` the SDK throws on", async () => {
    rig.mocks.openai.enqueue({ kind: "stream-error", afterChunks: 1, message: "boom" });
    const stream = rig.gateway.anthropic.messages.stream({ model: "gpt", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
  });

  it("OpenAI client, Anthropic upstream overloaded mid-stream: error data, no [DONE]", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 1 });
    const response = await postStream("/v1/chat/completions", { model: "claude", messages: [{ role: "user", content: "hi" }] }, new AbortController().signal);
    const text = await response.text();
    expect(text).not.toContain("[DONE]");
    // The last data event; the summary comment follows it (stream-failed-summary.e2e.test.ts).
    const events = await readSseEvents(new Response(text));
    const last = JSON.parse(events.at(-1)!.data);
    expect(last).toEqual({ error: { message: 'provider "anthropic" is overloaded: Overloaded', type: "server_error", param: null, code: "overloaded" } });
  });
});

describe("fallback before the first token", () => {
  it("moves to the next target when the first answers 503 (non-streaming)", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 503 });
    rig.mocks.anthropic.enqueue({ kind: "text", text: "from claude" });
    const { data, response } = await rig.gateway.openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe("from claude");
    expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");
    expect(rig.mocks.openai.requests).toHaveLength(1);
  });

  it("moves to the next target when the first answers 429 (streaming)", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 429, retryAfter: 7 });
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["fall", "back"] });
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("fallback");
  });

  it("does not fall back on a client error (400): the request itself is wrong", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 400, message: "context_length_exceeded", code: "context_length_exceeded" });
    await expect(rig.gateway.openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ status: 400 });
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});

describe("many streams at once", () => {
  it("keeps 40 concurrent streams apart: each client gets exactly its own answer", async () => {
    const count = 40;
    for (let i = 0; i < count; i++) rig.mocks.openai.enqueue({ kind: "text", chunks: [`answer`, ` number`, ` ${i}`], delayMsBetweenChunks: 2 });
    // Each request names its index so the answer can be matched to what the mock received.
    const texts = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: `request ${i}` }], stream: true });
        let text = "";
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
        return text;
      }),
    );
    // Replies are handed out in arrival order; map each back through the request the mock saw.
    const answerFor = new Map(rig.mocks.openai.requests.map((request, order) => [request.body.messages[0].content as string, `answer number ${order}`]));
    texts.forEach((text, i) => expect(text).toBe(answerFor.get(`request ${i}`)));
    expect(new Set(texts).size).toBe(count);
  });
});

describe("a provider that does not answer", () => {
  it("is cut off after the provider's timeoutMs with a 504 in the client's dialect", async () => {
    const config = testConfig();
    (config.providers.anthropic as Record<string, unknown>).timeoutMs = 300;
    const impatient = await startGateway({ config, port: 0, env: { OPENAI_API_KEY: "sk-test-openai", ANTHROPIC_API_KEY: "sk-ant-test" }, log: () => {}, upstreamTransport: "fetch" });
    try {
      rig.mocks.anthropic.enqueue({ kind: "endless", delayMsBetweenChunks: 50 });
      const response = await fetch(`${impatient.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": APP_KEY },
        body: JSON.stringify({ model: "claude", max_tokens: 5, messages: [{ role: "user", content: "x" }] }),
      });
      expect(response.status).toBe(504);
      expect(await response.json()).toEqual({ type: "error", error: { type: "timeout_error", message: 'provider "anthropic" did not answer within 300 ms' }, request_id: response.headers.get("request-id") });
      await until(() => rig.mocks.anthropic.requests[0]!.aborted, "the hung upstream request to be aborted");
    } finally {
      await impatient.close();
    }
  });
});

describe("a provider that sends its headers and then nothing", () => {
  // The official SDKs' timeout ends at the response headers; the router's deadline bounds the rest.
  it("is cut off at timeoutMs: a 504 in the client's dialect, the upstream call aborted, one error record, billed (its answer had begun)", async () => {
    const config = testConfig();
    (config.providers.anthropic as Record<string, unknown>).timeoutMs = 300;
    const gateway = await startTestGateway(config);
    try {
      rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0, headersOnly: true });
      const failure = await gateway.openai.chat.completions.create({ model: "claude", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect(failure).toMatchObject({ status: 504, error: { message: 'provider "anthropic" did not finish its answer within 300 ms', type: "server_error" } });
      await until(() => rig.mocks.anthropic.requests[0]!.aborted, "the stalled upstream request to be aborted");
      const record = await waitForRecord(gateway, (failure as InstanceType<typeof OpenAI.APIError>).headers!.get("x-tollgate-request-id")!);
      expect(record).toMatchObject({ status: "error", httpStatus: 504, errorType: "timeout", provider: "anthropic", estimated: true });
      expect(record.cost.totalNano).toBeGreaterThan(0);
    } finally {
      await gateway.close();
    }
  });

  it.each([
    { mode: "not streamed", stream: false },
    { mode: "streamed", stream: true },
  ])("counts as a failed target ($mode): the route falls back to the next one", async ({ stream }) => {
    const config = testConfig();
    (config.providers.openai as Record<string, unknown>).timeoutMs = 300;
    const gateway = await startTestGateway(config);
    try {
      rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 0, headersOnly: true });
      rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["rescued"] });
      const params = { model: "gpt-then-claude", max_tokens: 20, messages: [{ role: "user" as const, content: "hi" }] };
      const message = stream ? await gateway.anthropic.messages.stream(params).finalMessage() : await gateway.anthropic.messages.create(params);
      expect(message.content).toEqual([{ type: "text", text: "rescued" }]);
      expect(rig.mocks.openai.requests[0]!.aborted).toBe(true);
    } finally {
      await gateway.close();
    }
  });
});

describe("a provider that goes silent mid-stream", () => {
  async function gatewayWithIdleLimit(idleMs: number) {
    const config = testConfig();
    for (const provider of ["openai", "anthropic"] as const) (config.providers[provider] as Record<string, unknown>).streamIdleTimeoutMs = idleMs;
    return startTestGateway(config);
  }

  it("is cut off after streamIdleTimeoutMs: the client keeps what came and gets a timeout error; the call is aborted and recorded", async () => {
    const gateway = await gatewayWithIdleLimit(200);
    try {
      rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 2 });
      const { data: stream, response } = await gateway.openai.chat.completions
        .create({ model: "claude", max_tokens: 50, messages: [{ role: "user", content: "hi" }], stream: true })
        .withResponse();
      const { text, failure } = await readUntilFailure(stream);
      expect(text).toBe("chunk0 chunk1");
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as Error).message).toContain('provider "anthropic" went silent for 200 ms mid-stream; the stream was cut off');
      await until(() => rig.mocks.anthropic.requests[0]!.aborted, "the stalled upstream request to be aborted");
      const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
      // Two chunks came ("chunk0", " chunk1"): counted by the tokenizer, since no usage followed.
      expect(record).toMatchObject({ status: "error", httpStatus: 200, errorType: "timeout", provider: "anthropic", estimated: true });
      // "chunk0 chunk1", counted with o200k_base: 4 tokens.
      expect(record.usage.outputTokens).toBe(4);
    } finally {
      await gateway.close();
    }
  });
});

describe("a stream whose upstream is quiet for a while", () => {
  it("gets keep-alives the official SDKs skip: both clients read exactly the answer, the raw stream shows them", async () => {
    const config = testConfig();
    (config.server as Record<string, unknown>).streamKeepAliveSeconds = 0.03;
    const gateway = await startTestGateway(config);
    try {
      // 120 ms between chunks: several 30 ms keep-alive intervals of silence each time.
      const chunks = ["slow", " but", " steady"];
      rig.mocks.anthropic.enqueue({ kind: "text", chunks, delayMsBetweenChunks: 120 });
      const openaiStream = await gateway.openai.chat.completions.create({ model: "claude", max_tokens: 20, messages: [{ role: "user", content: "hi" }], stream: true });
      let openaiText = "";
      for await (const chunk of openaiStream) openaiText += chunk.choices[0]?.delta.content ?? "";
      expect(openaiText).toBe("slow but steady");

      rig.mocks.openai.enqueue({ kind: "text", chunks, delayMsBetweenChunks: 120 });
      const message = await gateway.anthropic.messages.stream({ model: "gpt", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }).finalMessage();
      expect(message.content).toEqual([{ type: "text", text: "slow but steady" }]);

      rig.mocks.openai.enqueue({ kind: "text", chunks, delayMsBetweenChunks: 120 });
      const raw = await fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": APP_KEY },
        body: JSON.stringify({ model: "gpt", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      const events = await readSseEvents(raw);
      const pings = events.filter((event) => event.event === "ping");
      expect(pings.length).toBeGreaterThanOrEqual(2);
      expect(pings.every((event) => event.data === '{"type":"ping"}')).toBe(true);
    } finally {
      await gateway.close();
    }
  });
});
