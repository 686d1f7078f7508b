import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { CostRecord } from "../metering/cost-record.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { createGatewayTelemetry } from "../telemetry/gateway-telemetry.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { createOtlpReceiver, decodeAttributes, pointWith, type OtlpMetric, type OtlpSpan, type TracesBody } from "../../test/support/otlp-receiver.ts";
import { setupTelemetry, type TelemetryHandle } from "./setup-telemetry.ts";

// The real SDK and exporters against a local OTLP/HTTP receiver: what a collector would be sent.

// From the GenAI semantic conventions (REFERENCE.md), written out here rather than imported so a
// wrong constant in the code cannot agree with itself.
const SPEC_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const SPEC_SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const OTLP_SPAN_KIND_SERVER = 2;
const OTLP_SPAN_KIND_CLIENT = 3;
const OTLP_STATUS_ERROR = 2;

const receiver = createOtlpReceiver();
const received = receiver.received;
let origin = "";
let handle: TelemetryHandle | undefined;

beforeAll(async () => {
  origin = await receiver.listen();
});
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
  received.length = 0;
});
afterAll(async () => {
  await receiver.close();
});

function receivedSpans(path = "/v1/traces"): OtlpSpan[] {
  return receiver.spans(path);
}
function receivedMetrics(): Map<string, OtlpMetric> {
  return receiver.metrics();
}

const chatRequest: ChatRequest = {
  route: "smart",
  messages: [{ role: "user", content: [{ type: "text", text: "the secret prompt" }] }],
  stream: true,
  streamUsage: true,
  maxTokens: 512,
  temperature: 0.3,
};
const target = { providerName: "openai-main", providerType: "openai" as const, model: "gpt-4o", baseUrl: "https://api.openai.com/v1" };

/** The shared test record, as this telemetry test's request would have made it. */
function costRecord(overrides: Partial<CostRecord>): CostRecord {
  return makeCostRecord({
    requestId: "req_1",
    time: "2026-07-01T12:00:00.000Z",
    keyId: "key_ops",
    team: "platform",
    route: "smart",
    provider: "openai-main",
    responseModel: "gpt-4o-2024-08-06",
    stream: true,
    // gpt-4o at $2.50 input, $1.25 cached, $10 output per 1M tokens.
    usage: { inputTokens: 800, cacheReadTokens: 1200, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 300, reasoningTokens: 0 },
    cost: { inputNano: 2_000_000, cacheReadNano: 1_500_000, cacheWriteNano: 0, outputNano: 3_000_000, totalNano: 6_500_000, cacheSavingsNano: 1_500_000 },
    ttftMs: 260,
    upstreamTtftMs: 250,
    durationMs: 1500,
    outputTokensPerSecond: 240,
    ...overrides,
  });
}

describe("setupTelemetry", () => {
  it("does nothing without an OTLP endpoint, or when the SDK is disabled", async () => {
    expect(await setupTelemetry({})).toBeUndefined();
    expect(await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_SDK_DISABLED: "true" })).toBeUndefined();

    // With nothing registered the gateway's telemetry runs on the API's no-op tracer and meter.
    const telemetry = createGatewayTelemetry();
    const requestSpan = telemetry.startRequestSpan("POST /v1/chat/completions", {});
    const chatSpan = telemetry.startChatSpan(requestSpan, chatRequest, target);
    expect([requestSpan.isRecording(), chatSpan.isRecording()]).toEqual([false, false]);
    telemetry.endChatSpan(chatSpan, { usage: { outputTokens: 1 } });
    telemetry.endRequestSpan(requestSpan, { httpStatus: 200, record: costRecord({}) });
    telemetry.recordMetrics(costRecord({}), target, { operationSeconds: 1.5 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual([]);
  });

  it("exports a SERVER span with its CLIENT chat child and the GenAI metrics as OTLP JSON", async () => {
    handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_METRIC_EXPORT_INTERVAL: "100000" });
    expect(handle).toBeDefined();
    const telemetry = createGatewayTelemetry();

    const okRecord = costRecord({});
    const requestSpan = telemetry.startRequestSpan("POST /v1/chat/completions", {
      "http.request.method": "POST",
      "url.path": "/v1/chat/completions",
      "tollgate.request_id": "req_1",
    });
    const chatSpan = telemetry.startChatSpan(requestSpan, chatRequest, target);
    telemetry.endChatSpan(chatSpan, {
      responseId: "chatcmpl-1",
      responseModel: "gpt-4o-2024-08-06",
      finishReason: "stop",
      usage: { inputTokens: 800, cacheReadTokens: 1200, outputTokens: 300, reasoningTokens: 0 },
      timeToFirstChunkSeconds: 0.25,
    });
    telemetry.endRequestSpan(requestSpan, { httpStatus: 200, record: okRecord });
    telemetry.recordMetrics(okRecord, target, { operationSeconds: 1.5, firstChunkSeconds: 0.25 });

    // A provider that timed out: error status on both spans, error.type on the duration metric.
    const failedRecord = costRecord({
      requestId: "req_2", team: "research", stream: false, status: "error", httpStatus: 504, errorType: "upstream_timeout",
      responseModel: undefined, finishReason: undefined, durationMs: 30_000, upstreamTtftMs: null, ttftMs: null,
      usage: { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 0, reasoningTokens: 0 },
      cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 0, cacheSavingsNano: 0 },
    });
    const failedRequest = telemetry.startRequestSpan("POST /v1/chat/completions", { "tollgate.request_id": "req_2" });
    const failedChat = telemetry.startChatSpan(failedRequest, { ...chatRequest, stream: false }, target);
    telemetry.endChatSpan(failedChat, { error: { type: "upstream_timeout", message: "no answer in 30 s" } });
    telemetry.endRequestSpan(failedRequest, { httpStatus: 504, record: failedRecord });
    telemetry.recordMetrics(failedRecord, target, { operationSeconds: 30 });

    await handle!.forceFlush();

    // Traces
    const traceBodies = received.filter((item) => item.path === "/v1/traces").map((item) => item.body as TracesBody);
    expect(traceBodies.length).toBeGreaterThan(0);
    expect(decodeAttributes(traceBodies[0]!.resourceSpans[0]!.resource?.attributes)["service.name"]).toBe("tollgate");
    const spans = receivedSpans();
    expect(spans).toHaveLength(4);
    const server = spans.find((span) => decodeAttributes(span.attributes)["tollgate.request_id"] === "req_1")!;
    const client = spans.find((span) => span.parentSpanId === server.spanId)!;
    expect(server.name).toBe("POST /v1/chat/completions");
    expect(server.kind).toBe(OTLP_SPAN_KIND_SERVER);
    expect(server.parentSpanId ?? "").toBe("");
    expect(server.status?.code ?? 0).not.toBe(OTLP_STATUS_ERROR);
    expect(decodeAttributes(server.attributes)).toEqual({
      "http.request.method": "POST",
      "url.path": "/v1/chat/completions",
      "tollgate.request_id": "req_1",
      "http.response.status_code": 200,
      "tollgate.route": "smart",
      "tollgate.key_id": "key_ops",
      "tollgate.team": "platform",
      "tollgate.cost_usd": 0.0065,
      "tollgate.estimated": false,
      "tollgate.unpriced": false,
    });
    expect(client.name).toBe("chat gpt-4o");
    expect(client.kind).toBe(OTLP_SPAN_KIND_CLIENT);
    expect(client.traceId).toBe(server.traceId);
    expect(client.spanId).not.toBe(server.spanId);
    expect(decodeAttributes(client.attributes)).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.request.max_tokens": 512,
      "gen_ai.request.temperature": 0.3,
      "server.address": "api.openai.com",
      "server.port": 443,
      "tollgate.provider": "openai-main",
      "gen_ai.response.id": "chatcmpl-1",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 2000,
      "gen_ai.usage.output_tokens": 300,
      "gen_ai.usage.cache_read.input_tokens": 1200,
      "gen_ai.usage.reasoning.output_tokens": 0,
      "gen_ai.response.time_to_first_chunk": 0.25,
    });
    expect(JSON.stringify(spans)).not.toContain("secret prompt");

    const failedServer = spans.find((span) => decodeAttributes(span.attributes)["tollgate.request_id"] === "req_2")!;
    const failedClient = spans.find((span) => span.parentSpanId === failedServer.spanId)!;
    expect(failedServer.status?.code).toBe(OTLP_STATUS_ERROR);
    expect(decodeAttributes(failedServer.attributes)).toMatchObject({ "http.response.status_code": 504, "error.type": "504", "tollgate.cost_usd": 0 });
    expect(failedClient.status).toMatchObject({ code: OTLP_STATUS_ERROR, message: "the call failed: upstream_timeout" });
    expect(decodeAttributes(failedClient.attributes)["error.type"]).toBe("upstream_timeout");

    // Metrics
    const metrics = receivedMetrics();
    const operation = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o" };
    const answered = { ...operation, "gen_ai.response.model": "gpt-4o-2024-08-06" };

    const tokenUsage = metrics.get("gen_ai.client.token.usage")!;
    expect(tokenUsage.unit).toBe("{token}");
    // The failed request reported no tokens, so it adds no token points.
    expect(tokenUsage.histogram!.dataPoints).toHaveLength(2);
    const inputPoint = pointWith(tokenUsage.histogram!.dataPoints, { ...answered, "gen_ai.token.type": "input" });
    const outputPoint = pointWith(tokenUsage.histogram!.dataPoints, { ...answered, "gen_ai.token.type": "output" });
    expect([inputPoint.sum, Number(inputPoint.count), outputPoint.sum, Number(outputPoint.count)]).toEqual([2000, 1, 300, 1]);
    expect(inputPoint.explicitBounds).toEqual(SPEC_TOKEN_BUCKETS);

    const duration = metrics.get("gen_ai.client.operation.duration")!;
    expect(duration.unit).toBe("s");
    expect(duration.histogram!.dataPoints).toHaveLength(2);
    const okDuration = pointWith(duration.histogram!.dataPoints, answered);
    const failedDuration = pointWith(duration.histogram!.dataPoints, { ...operation, "error.type": "upstream_timeout" });
    expect([okDuration.sum, failedDuration.sum]).toEqual([1.5, 30]);
    expect(okDuration.explicitBounds).toEqual(SPEC_SECONDS_BUCKETS);

    const firstChunk = metrics.get("gen_ai.client.operation.time_to_first_chunk")!;
    expect(firstChunk.unit).toBe("s");
    // Only the stream has a first chunk.
    expect(firstChunk.histogram!.dataPoints).toHaveLength(1);
    expect(pointWith(firstChunk.histogram!.dataPoints, answered).sum).toBe(0.25);
    expect(firstChunk.histogram!.dataPoints[0]!.explicitBounds).toEqual(SPEC_SECONDS_BUCKETS);

    const cost = metrics.get("tollgate.cost")!;
    expect(cost.unit).toBe("{nanodollar}");
    expect(cost.sum!.isMonotonic).toBe(true);
    const costAttributes = { "tollgate.route": "smart", "tollgate.key_id": "key_ops", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai", "tollgate.provider": "openai-main" };
    expect(pointWith(cost.sum!.dataPoints, { ...costAttributes, "tollgate.team": "platform" }).asInt).toBe(6_500_000); // nano-dollars, an integer sum
    expect(pointWith(cost.sum!.dataPoints, { ...costAttributes, "tollgate.team": "research" }).asInt).toBe(0);
  });

  it("says at start-up that it sends http/json when another OTLP protocol is asked for, and reports a propagator it lacks", async () => {
    const lines: string[] = [];
    handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_PROPAGATORS: "tracecontext,b3" }, (line) => lines.push(line));
    expect(lines).toEqual([
      "[tollgate] warning: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not what tollgate sends: it exports OTLP over HTTP as JSON (http/json), which a collector's HTTP port (4318) takes",
      '[tollgate] warning: OTEL_PROPAGATORS names "b3", which tollgate does not ship; it reads "tracecontext" and "baggage"',
    ]);
    await handle!.shutdown();
    handle = undefined;
    lines.length = 0;
    handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, (line) => lines.push(line));
    expect(lines).toEqual([]);
  });

  it("registers again after shutdown, honouring the traces-only endpoint and OTEL_SERVICE_NAME", async () => {
    handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin });
    await handle!.shutdown();
    handle = undefined;

    handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${origin}/custom/traces`, OTEL_SERVICE_NAME: "tollgate-eu" });
    const telemetry = createGatewayTelemetry();
    const span = telemetry.startRequestSpan("POST /v1/messages", { "tollgate.request_id": "req_3" });
    telemetry.endRequestSpan(span, { httpStatus: 200 });
    telemetry.recordMetrics(costRecord({}), target, { operationSeconds: 1.5 });
    await handle!.forceFlush();

    const spans = receivedSpans("/custom/traces");
    expect(spans.map((exported) => exported.name)).toEqual(["POST /v1/messages"]);
    const body = received.find((item) => item.path === "/custom/traces")!.body as TracesBody;
    expect(decodeAttributes(body.resourceSpans[0]!.resource?.attributes)["service.name"]).toBe("tollgate-eu");
    // No metrics endpoint was configured, so the metrics stay on the API's no-op meter.
    expect(received.map((item) => item.path)).toEqual(["/custom/traces"]);
  });

  it("puts OTEL_RESOURCE_ATTRIBUTES on the resource, with a service.instance.id per process unless one is named", async () => {
    const resourceOf = async (environment: Record<string, string>) => {
      handle = await setupTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: origin, ...environment });
      const telemetry = createGatewayTelemetry();
      telemetry.endRequestSpan(telemetry.startRequestSpan("POST /v1/messages", {}), { httpStatus: 200 });
      await handle!.shutdown();
      handle = undefined;
      const body = received.filter((item) => item.path === "/v1/traces").at(-1)!.body as TracesBody;
      return decodeAttributes(body.resourceSpans[0]!.resource?.attributes);
    };
    // The SDK's detector reads the process environment, as it would in production.
    vi.stubEnv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes,service.instance.id=gw-7,deployment.environment.name=prod");
    try {
      expect(await resourceOf({})).toMatchObject({ "service.name": "from-attributes", "service.instance.id": "gw-7", "deployment.environment.name": "prod" });
      // OTEL_SERVICE_NAME wins over a service.name in the attributes.
      expect((await resourceOf({ OTEL_SERVICE_NAME: "tollgate-eu" }))["service.name"]).toBe("tollgate-eu");
    } finally {
      vi.unstubAllEnvs();
    }
    // Without them: tollgate, and the process's own random id.
    const plain = await resourceOf({});
    expect(plain["service.name"]).toBe("tollgate");
    expect(String(plain["service.instance.id"])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
