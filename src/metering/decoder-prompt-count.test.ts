import { describe, expect, it } from "vitest";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { decoderPromptCount, PROMPT_COUNTED_BY_DECODER } from "./decoder-prompt-count.ts";
import { PriceBook } from "./price-book.ts";
import { RequestMeter, type MeterOutcome } from "./request-meter.ts";
import { createTiktokenCounter } from "./tiktoken-counter.ts";

// When a cut local call's record asks its decoder for the prompt's count (the end-to-end case, on a
// real llama-server, is test/decoder-cut-prompt-count.e2e.test.ts): only once the client no longer
// waits on the record, and never failing it.

const counter = createTiktokenCounter();
const prices = new PriceBook({
  local: { name: "local", type: "openai-compatible", optional: false, timeoutMs: 1, maxRetries: 0, baseUrl: "http://127.0.0.1:1/v1", pricing: { default: { inputPerMillion: 1, outputPerMillion: 1 } } },
} as never);
const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }] };
// o200k: 3 (message) + 2 ("Say hi") + 3 (reply primer).
const ESTIMATE = 8;

/** A meter whose call to "local" was cut after "Hello" came back, and the times its decoder was asked. */
function cutCall(decoderCount: number | undefined) {
  const asked = { times: 0 };
  const meter = new RequestMeter({ requestId: "req_1", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: performance.now() }, { prices, counter });
  meter.attempting({ providerName: "local", model: "m" }, performance.now(), { decoderPromptCount: async () => (asked.times++, decoderCount) });
  meter.observe({ type: "text-delta", text: "Hello" });
  return { meter, asked };
}

describe("a cut local call's prompt", () => {
  it.each<[string, MeterOutcome]>([
    ["the client left", { status: "aborted", httpStatus: 499 }],
    ["the decoder failed after the stream's last byte went out", { status: "error", httpStatus: 200, errorType: "upstream", afterLastByte: true }],
  ])("%s: is the decoder's count; the output that came back is still an estimate", async (_, outcome) => {
    const { meter, asked } = cutCall(117);
    const record = await meter.finish(outcome);
    expect(asked.times).toBe(1);
    expect(record.usage).toMatchObject({ inputTokens: 117, outputTokens: 1 });
    expect(record).toMatchObject({ estimated: true, warnings: [PROMPT_COUNTED_BY_DECODER] });
  });

  // A failure the client is still waiting for (the error answer of a request not streamed, or a
  // billed call the route moves on from) is not held up by a question to a decoder that may be dead.
  it("a failure the client still waits on: not asked, counted by tollgate", async () => {
    const { meter, asked } = cutCall(117);
    const record = await meter.finish({ status: "error", httpStatus: 502, errorType: "upstream" });
    expect(asked.times).toBe(0);
    expect(record.usage.inputTokens).toBe(ESTIMATE);
  });

  it("a decoder with no count (gone, or without the endpoints): tollgate's count, flagged estimated", async () => {
    const { meter, asked } = cutCall(undefined);
    const record = await meter.finish({ status: "aborted", httpStatus: 499 });
    expect(asked.times).toBe(1);
    expect(record).toMatchObject({ estimated: true, warnings: [], usage: { inputTokens: ESTIMATE } });
  });
});

describe("decoderPromptCount", () => {
  const model = (type: ChatModel["providerType"], countTokens: ChatModel["countTokens"]): ChatModel =>
    ({ providerName: "p", providerType: type, baseUrl: "http://127.0.0.1:1/v1", generate: async () => undefined as never, stream: async function* () {}, countTokens }) as ChatModel;

  it("is only for local decoders: a cloud provider reports its prompt's usage or bills nothing", () => {
    expect(decoderPromptCount(model("anthropic", async () => 5), "m", request)).toBeUndefined();
    expect(decoderPromptCount(model("openai-compatible", async () => 5), "m", request)).toBeDefined();
  });

  it("a decoder that fails answers nothing, and one without the endpoints is not asked again for 10 minutes", async () => {
    expect(await decoderPromptCount(model("openai-compatible", async () => Promise.reject(new Error("ECONNREFUSED"))), "m", request)!()).toBeUndefined();
    let asked = 0;
    const vllm = model("openai-compatible", async () => (asked++, "no-endpoint"));
    let now = 0;
    const count = decoderPromptCount(vllm, "m", request, () => now)!;
    expect([await count(), await count()]).toEqual([undefined, undefined]);
    expect(asked).toBe(1);
    now = 10 * 60_000;
    await count();
    expect(asked).toBe(2);
  });
});
