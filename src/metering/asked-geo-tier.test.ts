import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../model/chat-request.ts";
import { PriceBook } from "./price-book.ts";
import { RequestMeter } from "./request-meter.ts";
import { createTiktokenCounter } from "./tiktoken-counter.ts";

// A call cut before its answer says where and at which tier it ran (a client gone during a long
// prefill, a deadline) is billed as it asked: Anthropic bills inference_geo "us" at 1.1× and OpenAI
// a provider pinned to "priority" at priority rates, answer or not. Was: the global, standard price.
// "Say hi" counts 8 input tokens (js-tiktoken o200k_base, with the message framing).

const counter = createTiktokenCounter();
const prices = new PriceBook({
  openai: { name: "openai", type: "openai", optional: false, timeoutMs: 1, maxRetries: 0, serviceTier: "priority" },
  // Not pinned: a project whose default tier is priority, as its answers said.
  learned: { name: "learned", type: "openai", optional: false, timeoutMs: 1, maxRetries: 0 },
  anthropic: { name: "anthropic", type: "anthropic", optional: false, timeoutMs: 1, maxRetries: 0 },
});
prices.heardTier("learned", "priority");

function meterFor(target: { providerName: string; model: string }, inferenceGeo?: string, fields: Partial<ChatRequest> = {}) {
  const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }], ...(inferenceGeo ? { inferenceGeo } : {}), ...fields };
  const meter = new RequestMeter(
    { requestId: "req_1", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "anthropic", receivedAt: performance.now() },
    { prices, counter },
  );
  meter.attempting(target, performance.now());
  return meter;
}

describe("a call cut before its answer is billed where and at the tier it asked for", () => {
  it('Claude asked for inference_geo "us": 1.1× the input price', async () => {
    const record = await meterFor({ providerName: "anthropic", model: "claude-opus-4-6" }, "us").finish({ status: "aborted", httpStatus: 499 });
    expect(record.usage.inputTokens).toBe(8);
    // Opus 4.6 input $5 / 1M, in the US $5.50: 5,500 nano a token.
    expect(record.cost.inputNano).toBe(8 * 5_500);
    expect(record.inferenceGeo).toBe("us");
  });

  it("an OpenAI provider pinned to priority: the priority price", async () => {
    const record = await meterFor({ providerName: "openai", model: "gpt-4o" }).finish({ status: "aborted", httpStatus: 499 });
    // gpt-4o priority input $4.25 / 1M (standard $2.50).
    expect(record.cost.inputNano).toBe(8 * 4_250);
    expect(record.serviceTier).toBe("priority");
  });

  it("what an answer says wins over what was asked", async () => {
    const claude = meterFor({ providerName: "anthropic", model: "claude-opus-4-6" }, "us");
    claude.observe({ type: "start", id: "msg_1", model: "claude-opus-4-6", inferenceGeo: "global" });
    const global = await claude.finish({ status: "aborted", httpStatus: 499 });
    expect(global.cost.inputNano).toBe(8 * 5_000);
    expect(global.inferenceGeo).toBeUndefined();

    // OpenAI serves a prompt over 128k tokens at "default" even where priority is asked.
    const gpt = meterFor({ providerName: "openai", model: "gpt-4o" });
    gpt.observe({ type: "start", id: "chatcmpl-1", model: "gpt-4o", serviceTier: "default" });
    const standard = await gpt.finish({ status: "aborted", httpStatus: 499 });
    expect(standard.cost.inputNano).toBe(8 * 2_500);
    expect(standard.serviceTier).toBeUndefined();
  });

  it("a project that defaults to priority, asked for \"default\" by the client: the standard price", async () => {
    const asked = await meterFor({ providerName: "learned", model: "gpt-4o" }, undefined, { openAIServiceTier: "default" }).finish({ status: "aborted", httpStatus: 499 });
    expect(asked.cost.inputNano).toBe(8 * 2_500);
    const unasked = await meterFor({ providerName: "learned", model: "gpt-4o" }).finish({ status: "aborted", httpStatus: 499 });
    expect(unasked.cost.inputNano).toBe(8 * 4_250);
  });

  it("a prompt over 128k tokens, which OpenAI serves at \"default\" even where priority is asked: the standard price", async () => {
    const meter = meterFor({ providerName: "openai", model: "gpt-4o" });
    meter.observe({ type: "usage", usage: { inputTokens: 130_000, cacheReadTokens: 0, outputTokens: 0 } });
    const record = await meter.finish({ status: "aborted", httpStatus: 499 });
    expect(record.cost.inputNano).toBe(130_000 * 2_500);
    expect(record.serviceTier).toBeUndefined();
  });

  it("a geo asked of a target that is not Claude changes nothing", async () => {
    const record = await meterFor({ providerName: "openai", model: "gpt-4o" }, "us").finish({ status: "aborted", httpStatus: 499 });
    expect(record.cost.inputNano).toBe(8 * 4_250);
    expect(record.inferenceGeo).toBeUndefined();
  });
});
