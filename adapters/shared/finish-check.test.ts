import { describe, expect, it } from "vitest";
import { createAnthropicAdapter } from "../../adapters/anthropic/create-anthropic-adapter.ts";
import { createOpenAIAdapter } from "../../adapters/openai/create-openai-adapter.ts";
import { createOpenAICompatibleAdapter } from "../../adapters/openai-compatible/create-openai-compatible-adapter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";

// A stream whose body just stops (connection cut, proxy timeout) before message_stop /
// finish_reason: the SDKs end their iteration without throwing. The openai-compatible adapter
// reports that as an error part ("stopped before the answer was complete"); the
// openai and anthropic adapters end cleanly, so the client gets a normal end (Anthropic:
// message_delta stop_reason "end_turn"; OpenAI: [DONE]) for a truncated answer, and the
// route never falls back. REFERENCE.md peer pitfall: "stream errors swallowed into a clean end".

const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };

const sseFetch = (body: string): typeof fetch =>
  (async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } })) as typeof fetch;

async function collect(parts: AsyncGenerator<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

describe("a cut-off upstream stream is not a complete answer", () => {
  it("anthropic adapter", async () => {
    const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const body =
      ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } });
    const adapter = createAnthropicAdapter({ name: "anthropic", apiKey: "sk-ant-test", fetch: sseFetch(body) });
    const parts = await collect(adapter.stream(request, "claude-sonnet-4-6", new AbortController().signal));
    expect(parts.at(-1)?.type).toBe("error");
  });

  it("openai adapter", async () => {
    const chunk = (delta: object) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] })}\n\n`;
    const adapter = createOpenAIAdapter({ name: "openai", apiKey: "sk-test", fetch: sseFetch(chunk({ role: "assistant", content: "" }) + chunk({ content: "The answer is" })) });
    const parts = await collect(adapter.stream(request, "gpt-4o", new AbortController().signal));
    expect(parts.at(-1)?.type).toBe("error");
  });
});

// A 200 whose stream closes before its first event (a proxy or load balancer that lost the
// provider): nothing says the provider read the prompt. Not billed, as a reset before the first
// event is not; retryable, so the route may try its next target. Was billed the prompt as counted
// (`billed: {}`), and on a fallback charged on top of the call that answered.
describe("a stream that closes before its first event", () => {
  const adapters = {
    anthropic: () => createAnthropicAdapter({ name: "anthropic", apiKey: "sk-ant-test", fetch: sseFetch("") }),
    openai: () => createOpenAIAdapter({ name: "openai", apiKey: "sk-test", fetch: sseFetch("") }),
    "openai-compatible": () => createOpenAICompatibleAdapter({ name: "gpu", baseUrl: "http://decoder.test/v1", fetch: sseFetch("") }),
  };

  it.each(Object.entries(adapters))("%s adapter: an unbilled failure the route may fall back from", async (_name, adapter) => {
    const parts = await collect(adapter().stream(request, "some-model", new AbortController().signal));
    const last = parts.at(-1);
    expect(parts).toHaveLength(1);
    expect(last?.type === "error" && { message: last.error.message, retryable: last.error.retryable, billed: last.error.billed }).toEqual({
      message: expect.stringContaining("closed the stream without answering"),
      retryable: true,
      billed: undefined,
    });
  });
});
