import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import type { HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { useTestMeterProvider } from "../../test/support/test-meter.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { MemoryLedgerStore } from "../../src/ledger/memory-ledger-store.ts";
import { Metering } from "../../src/metering/metering.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { Target } from "../../src/routing/route-chat.ts";
import { createGatewayTelemetry } from "../../src/telemetry/gateway-telemetry.ts";

// gen_ai.client.token.usage gets no points for a call that used no tokens. An aborted request
// whose only call the provider refused (a 503, not billed), the client gone by the time it was
// recorded, put an input and an output point of 0 in the histogram: only failed ("error")
// records were kept out.

const reader = useTestMeterProvider();

const config = resolveConfig({ providers: { a: { type: "openai", apiKey: { env: "K" } } }, routes: { r: { targets: [{ provider: "a", model: "gpt-4o" }] } } }, { K: "sk" });
const metering = new Metering({ config, ledger: new Ledger({ store: new MemoryLedgerStore(), log: () => {} }), counter: approximateTokenCounter, telemetry: createGatewayTelemetry({ enabled: true }) });
const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi there" }] }] };
const target = (model: string): Target => ({ model: { providerName: "a", providerType: "openai", baseUrl: "https://api.openai.com/v1" } as never, modelName: model });
const caller = { kind: "key" as const, key: { id: "k", team: "t", hash: "sha256:x" } };

async function tokenPoints(model: string) {
  const { resourceMetrics } = await reader.collect();
  const histogram = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === "gen_ai.client.token.usage") as HistogramMetricData | undefined;
  return (histogram?.dataPoints ?? []).filter((point) => point.attributes["gen_ai.request.model"] === model).map((point) => ({ type: point.attributes["gen_ai.token.type"], sum: point.value.sum }));
}

describe("gen_ai.client.token.usage", () => {
  it("has the tokens of an answered call (so the test below can fail)", async () => {
    const call = metering.start({ requestId: "req_ok", caller, request, dialect: "openai", receivedAt: performance.now() }, trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
    call.attemptStarted(target("gpt-4o"), request, performance.now());
    call.answered({ id: "x", model: "gpt-4o", content: [{ type: "text", text: "hello" }], finishReason: "stop", usage: { inputTokens: 10, outputTokens: 2 } });
    await call.commit({ status: "ok", httpStatus: 200 });
    expect(await tokenPoints("gpt-4o")).toEqual(expect.arrayContaining([{ type: "input", sum: 10 }, { type: "output", sum: 2 }]));
  });

  it("has no points for an aborted request whose only call was refused", async () => {
    const call = metering.start({ requestId: "req_gone", caller, request, dialect: "openai", receivedAt: performance.now() }, trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
    const refused = new GatewayError("unavailable", "503", { code: "server_error" });
    call.attemptStarted(target("gpt-4o-2024-08-06"), request, performance.now());
    call.attemptFailed(target("gpt-4o-2024-08-06"), refused, false); // the provider refused: not billed
    await call.fail(refused, true); // the client had left meanwhile
    expect(await tokenPoints("gpt-4o-2024-08-06")).toEqual([]);
  });
});
