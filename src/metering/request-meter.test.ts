import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { Ledger } from "../ledger/ledger.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import { createGatewayTelemetry } from "../telemetry/gateway-telemetry.ts";
import { Metering } from "./metering.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { PriceBook } from "./price-book.ts";
import { RequestMeter } from "./request-meter.ts";
import { createTiktokenCounter } from "./tiktoken-counter.ts";

// The meter's fallbacks, where providers report nothing or only part of the usage. Token counts
// are js-tiktoken o200k_base: "Hello from a real local decoder." is 7 tokens, "Say hi" 2.

const counter = createTiktokenCounter();
const prices = new PriceBook({
  openai: { name: "openai", type: "openai", optional: false, timeoutMs: 1, maxRetries: 0 },
  anthropic: { name: "anthropic", type: "anthropic", optional: false, timeoutMs: 1, maxRetries: 0 },
});

function meterFor(stream: boolean) {
  const request: ChatRequest = { route: "r", stream, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }] };
  const meter = new RequestMeter(
    { requestId: "req_1", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: performance.now() },
    { prices, counter },
  );
  return meter;
}

const answer: StreamPart[] = [
  { type: "start", id: "x", model: "gpt-4o-2024-08-06" },
  { type: "text-delta", text: "Hello from a real" },
  { type: "text-delta", text: " local decoder." },
];

describe("RequestMeter", () => {
  it("a completed stream with no usage at all: both sides counted, flagged estimated", async () => {
    const meter = meterFor(true);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    for (const part of [...answer, { type: "finish", reason: "stop" } as const]) meter.observe(part);
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    // Input: 3 (message) + 2 ("Say hi") + 3 (reply primer) = 8. Output: 7.
    expect(record.usage).toMatchObject({ inputTokens: 8, outputTokens: 7 });
    expect(record.estimated).toBe(true);
    // gpt-4o: 8 × 2500 + 7 × 10,000 = 90,000 nano.
    expect(record.cost.totalNano).toBe(90_000);
    expect(record.responseModel).toBe("gpt-4o-2024-08-06");
  });

  it("an Anthropic stream aborted after message_start: reported input kept, placeholder output replaced by the count", async () => {
    const meter = meterFor(true);
    meter.attempting({ providerName: "anthropic", model: "claude-haiku-4-5" }, performance.now());
    meter.observe({ type: "usage", usage: { inputTokens: 1500, cacheReadTokens: 0, cacheWrite5mTokens: 0, outputTokens: 1 } });
    for (const part of answer) meter.observe(part);
    const record = await meter.finish({ status: "aborted", httpStatus: 200 });
    expect(record.usage).toMatchObject({ inputTokens: 1500, outputTokens: 7 });
    expect(record.estimated).toBe(true);
    // Haiku 4.5: 1500 × 1000 + 7 × 5000 = 1,535,000 nano.
    expect(record.cost.totalNano).toBe(1_535_000);
    expect(record.status).toBe("aborted");
  });

  it("a complete report is never second-guessed", async () => {
    const meter = meterFor(true);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    for (const part of answer) meter.observe(part);
    meter.observe({ type: "usage", usage: { inputTokens: 20, cacheReadTokens: 0, outputTokens: 30 } });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    expect(record.usage).toMatchObject({ inputTokens: 20, outputTokens: 30 });
    expect(record.estimated).toBe(false);
  });

  it("a non-streamed answer without usage (some local servers) is counted from the request and the message", async () => {
    const meter = meterFor(false);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    meter.answered({ id: "x", model: "gpt-4o", content: [{ type: "text", text: "Hello from a real local decoder." }], finishReason: "stop" });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    expect(record.usage).toMatchObject({ inputTokens: 8, outputTokens: 7 });
    expect(record).toMatchObject({ estimated: true, outputTokensPerSecond: null });
    expect(record.ttftMs).not.toBeNull();
  });

  it("a count no server could mean (2^64 − 1, an unsigned −1) is counted instead, and the record flagged estimated", async () => {
    // Used to be billed as reported: 1.8e19 tokens, 4.6e22 nano-dollars, which Redis's 64-bit
    // counters refused half-way through the record's write.
    const meter = meterFor(false);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    meter.answered({ id: "x", model: "gpt-4o", content: [{ type: "text", text: "Hello from a real local decoder." }], finishReason: "stop", usage: { inputTokens: 2 ** 64 - 1, outputTokens: 7, cacheReadTokens: -1 } });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    expect(record.usage).toMatchObject({ inputTokens: 8, cacheReadTokens: 0, outputTokens: 7 });
    expect(record.estimated).toBe(true);
    // gpt-4o: 8 × 2500 + 7 × 10,000 = 90,000 nano.
    expect(record.cost.totalNano).toBe(90_000);
  });

  it("a count the provider reported above the max_tokens sent is billed as reported: only tollgate's own count is held to it", async () => {
    const meter = meterFor(true);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now(), { sentMaxTokens: 5 });
    for (const part of answer) meter.observe(part);
    meter.observe({ type: "usage", usage: { inputTokens: 20, cacheReadTokens: 0, outputTokens: 30 } });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    expect(record).toMatchObject({ estimated: false, usage: { inputTokens: 20, outputTokens: 30 } });
    // gpt-4o: 20 × 2500 + 30 × 10,000 = 350,000 nano.
    expect(record.cost.totalNano).toBe(350_000);
  });

  it("thinking counted past the max_tokens sent: output held to it, reasoning within it", async () => {
    const meter = meterFor(true);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now(), { sentMaxTokens: 5 });
    meter.observe({ type: "reasoning-delta", text: "Hello from a real local decoder." }); // 7 tokens
    meter.observe({ type: "text-delta", text: "Say hi" }); // 2
    const record = await meter.finish({ status: "aborted", httpStatus: 499 });
    expect(record.usage).toMatchObject({ inputTokens: 8, outputTokens: 5, reasoningTokens: 5 });
    // gpt-4o: 8 × 2500 + 5 × 10,000 = 70,000 nano (was 8 × 2500 + 9 × 10,000 = 110,000).
    expect(record.cost.totalNano).toBe(70_000);
  });

  it("a provider that failed before answering costs nothing and estimates nothing", async () => {
    const meter = meterFor(false);
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    const record = await meter.finish({ status: "error", httpStatus: 503, errorType: "unavailable" });
    expect(record).toMatchObject({ estimated: false, cost: { totalNano: 0 }, usage: { inputTokens: 0, outputTokens: 0 }, errorType: "unavailable" });
  });
});

describe("a metering failure", () => {
  it("never rejects a commit, and still releases what the request held", async () => {
    const config = resolveConfig({ providers: { openai: { type: "openai", apiKey: { env: "K" } } }, routes: { r: { targets: [{ provider: "openai", model: "gpt-4o" }] } } }, { K: "sk" });
    const broken = { count: async () => { throw new Error("tokenizer bug"); } };
    const logs: string[] = [];
    const metering = new Metering({ config, ledger: new Ledger({ store: new MemoryLedgerStore(), log: () => {} }), counter: broken, telemetry: createGatewayTelemetry({ enabled: false }), log: (line) => logs.push(line) });
    const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const call = metering.start({ requestId: "req_bug", caller: { kind: "admin" }, request, dialect: "openai", receivedAt: performance.now() }, trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
    const finished: unknown[] = [];
    call.onFinished((record) => finished.push(record));
    call.attemptStarted({ model: { providerName: "openai", providerType: "openai" } as never, modelName: "gpt-4o" }, request, performance.now());
    call.observe({ type: "text-delta", text: "no usage will come" }); // so the meter must count, and the counter throws
    await expect(call.commit({ status: "ok", httpStatus: 200 })).resolves.toBeUndefined();
    expect(finished).toEqual([undefined]); // the listener (the budget's settle) still ran
    expect(logs.join()).toContain("no cost record for req_bug");
  });
});
