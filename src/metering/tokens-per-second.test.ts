import { afterEach, describe, expect, it, vi } from "vitest";
import { PriceBook } from "../../src/metering/price-book.ts";
import { RequestMeter } from "../../src/metering/request-meter.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";

// An o3 stream: 1000 hidden reasoning tokens take 10 s (nothing reaches the client), then 100
// visible tokens stream in the next 1 s. usage: completion_tokens 1100 (reasoning included),
// reasoning_tokens 1000. The meter divided ALL 1100 − 1 tokens by the 1 s after the first
// visible token: 1099 tok/s, ten times the decoder's real speed.

const prices = new PriceBook({ openai: { name: "openai", type: "openai", optional: false, timeoutMs: 1, maxRetries: 0 } });

afterEach(() => vi.restoreAllMocks());

describe("outputTokensPerSecond of a reasoning model", () => {
  it("does not count reasoning tokens generated before the first visible token as generated after it", async () => {
    let now = 1_000;
    vi.spyOn(performance, "now").mockImplementation(() => now);
    const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "Think" }] }] };
    const meter = new RequestMeter(
      { requestId: "req_tps", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: now },
      { prices, counter: approximateTokenCounter },
    );
    meter.attempting({ providerName: "openai", model: "o3" }, now);
    meter.observe({ type: "start", id: "c", model: "o3-2025-04-16" });
    now += 10_000; // reasoning, invisible
    meter.observe({ type: "text-delta", text: "first" });
    now += 1_000; // 99 more visible tokens
    meter.observe({ type: "text-delta", text: " rest" });
    meter.observe({ type: "finish", reason: "stop" });
    meter.observe({ type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, outputTokens: 1100, reasoningTokens: 1000 } });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    // Visible tokens after the first: 100 − 1 = 99 in 1 s → 99 tok/s (or 1100 / 11 s = 100 tok/s
    // over the whole generation). Never 1099.
    expect(record.outputTokensPerSecond).toBe(99);
  });
});
