import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import type { HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { afterAll, describe, expect, it, vi } from "vitest";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { MemoryLedgerStore } from "../../src/ledger/memory-ledger-store.ts";
import { Metering } from "../../src/metering/metering.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { Target } from "../../src/routing/route-chat.ts";
import { createGatewayTelemetry } from "../../src/telemetry/gateway-telemetry.ts";
import { useTestMeterProvider } from "../../test/support/test-meter.ts";

// gen_ai.client.operation.duration is the CLIENT's duration of one GenAI call. The gateway
// records one point per failed upstream attempt (recordFailedAttempt, measured from that
// attempt's start), and then one for the answering attempt from record.durationMs, which is
// measured from the request's ARRIVAL: the failed attempt's time is counted again (and so is
// the gateway's own time before the first call).

const reader = useTestMeterProvider();
afterAll(() => {
  vi.restoreAllMocks();
});

describe("gen_ai.client.operation.duration after a fallback", () => {
  it("the answering call's point is its own duration, not the whole request's", async () => {
    let now = 10_000;
    vi.spyOn(performance, "now").mockImplementation(() => now);
    const config = resolveConfig(
      {
        providers: { a: { type: "openai", apiKey: { env: "K" } }, b: { type: "openai", apiKey: { env: "K" } } },
        routes: { r: { targets: [{ provider: "a", model: "gpt-4o" }, { provider: "b", model: "gpt-4o" }] } },
      },
      { K: "sk" },
    );
    const telemetry = createGatewayTelemetry({ enabled: true });
    const metering = new Metering({ config, ledger: new Ledger({ store: new MemoryLedgerStore(), log: () => {} }), counter: approximateTokenCounter, telemetry });
    const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const call = metering.start(
      { requestId: "req_fb", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: now },
      trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
    );
    const target = (name: string): Target => ({ model: { providerName: name, providerType: "openai", baseUrl: "https://api.openai.com/v1" } as never, modelName: "gpt-4o" });

    call.attemptStarted(target("a"), request, now); // t = 0
    now += 2_000;
    call.attemptFailed(target("a"), new GatewayError("unavailable", "503", { retryable: true, code: "server_error" }), false); // 2 s
    call.attemptStarted(target("b"), request, now); // t = 2 s
    now += 1_000;
    call.answered({ id: "x", model: "gpt-4o", content: [{ type: "text", text: "hello" }], finishReason: "stop", usage: { inputTokens: 10, cacheReadTokens: 0, outputTokens: 2 } });
    await call.commit({ status: "ok", httpStatus: 200 }); // t = 3 s

    const { resourceMetrics } = await reader.collect();
    const histogram = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === "gen_ai.client.operation.duration") as HistogramMetricData;
    const points = histogram.dataPoints.map((point) => ({ error: point.attributes["error.type"] ?? null, sum: point.value.sum }));
    // Two calls: the failed one took 2 s, the answering one 1 s; together they are the 3 s request.
    expect(points).toEqual(expect.arrayContaining([{ error: "server_error", sum: 2 }, { error: null, sum: 1 }]));
  });
});
