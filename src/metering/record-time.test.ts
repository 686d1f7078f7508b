import { afterEach, describe, expect, it, vi } from "vitest";
import { PriceBook } from "../../src/metering/price-book.ts";
import { RequestMeter } from "../../src/metering/request-meter.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";

// cost-record.ts: `time` is "ISO 8601 UTC time the request arrived", and recordDay(record) puts
// the record (and its Redis aggregates, and its budget window) in that UTC day. RequestMeter
// takes Date.now() when the meter is CONSTRUCTED, which handle-chat does only after the body was
// read, the policies ran (token counting) and admission (a Redis round trip) was done; the
// arrival is `receivedAt`. A 10 MB body uploaded across midnight lands in the wrong day.

const prices = new PriceBook({ openai: { name: "openai", type: "openai", optional: false, timeoutMs: 1, maxRetries: 0 } });

describe("CostRecord.time", () => {
  afterEach(() => vi.useRealTimers());

  it("is when the request arrived (receivedAt), not when metering began", async () => {
    // Both clocks frozen: the request arrived at 11:59:55.000 and metering begins at 12:00:00.000.
    vi.useFakeTimers({ now: Date.UTC(2026, 2, 10, 12, 0, 0), toFake: ["Date", "performance"] });
    const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const arrivedFiveSecondsAgo = performance.now() - 5_000;
    const meter = new RequestMeter(
      { requestId: "req_t", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: arrivedFiveSecondsAgo },
      { prices, counter: approximateTokenCounter },
    );
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    meter.answered({ id: "x", model: "gpt-4o", content: [], finishReason: "stop", usage: { inputTokens: 1, outputTokens: 1 } });
    const record = await meter.finish({ status: "ok", httpStatus: 200 });
    expect(record.time).toBe("2026-03-10T11:59:55.000Z"); // not 12:00:00
    expect(record.durationMs).toBe(5_000); // the duration does use the arrival
  });

  it("of a billed call before a fallback is its request's, however the wall clock moved during the call", async () => {
    // Used to be wrong: the call's meter worked the arrival out again when the call failed, so a
    // wall clock stepped back 20 ms (NTP) put the call on 2026-11-23 and its request on the 24th.
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 24, 0, 0, 0, 10), toFake: ["Date", "performance"] });
    const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const meter = new RequestMeter(
      { requestId: "req_t", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: performance.now() },
      { prices, counter: approximateTokenCounter },
    );
    meter.attempting({ providerName: "openai", model: "gpt-4o" }, performance.now());
    vi.advanceTimersByTime(60_000);
    vi.setSystemTime(Date.now() - 20);
    meter.attemptFailed({ usage: { inputTokens: 10, outputTokens: 1 } });
    const call = await meter.detachAttempt("req_t.1").finish({ status: "error", httpStatus: 504, errorType: "timeout" });
    meter.attemptRecordedApart();
    const own = await meter.finish({ status: "ok", httpStatus: 200 });
    expect([call.time, own.time]).toEqual(["2026-11-24T00:00:00.010Z", "2026-11-24T00:00:00.010Z"]);
  });
});
