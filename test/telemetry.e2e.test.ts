import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { decodeAttributes, pointWith, type OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

// OpenTelemetry end to end (the rig: test/support/telemetry-gateway.ts): the official OpenAI SDK as
// the client, msw as the clouds, a local OTLP/HTTP receiver as the collector.

// From the GenAI semantic conventions, written out rather than imported so a wrong constant in the
// code cannot agree with itself.
const SPEC_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const SPEC_SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const OTLP_SPAN_KIND_SERVER = 2;
const OTLP_SPAN_KIND_CLIENT = 3;
const OTLP_STATUS_ERROR = 2;

// Text that must never reach the collector while content capture is off (the default).
const SECRET_PROMPT = "ultraviolet pangolin password 7741";
const SECRET_ANSWER = "Cached answer about zebras.";

const rig = useTelemetryGateway();
const { receiver } = rig;

async function startTelemetryGateway(): Promise<OpenAI> {
  const { openai } = await rig.start();
  expect(rig.log.join("\n")).toContain("OpenTelemetry export is on");
  return openai;
}

/** Closes the gateway (flushing the SDK), then waits until both signals have reached the receiver. */
async function closeGatewayAndCollect(): Promise<void> {
  await rig.close();
  const arrived = (path: string) => receiver.received.some((item) => item.path === path);
  await receiver.waitFor(() => arrived("/v1/traces") && arrived("/v1/metrics"), "traces and metrics");
}

function attributesOf(span: OtlpSpan): Record<string, unknown> {
  return decodeAttributes(span.attributes);
}

/** Checks one attribute at a time, so a failure names the attribute. */
function expectAttributes(span: OtlpSpan, expected: Record<string, unknown>): void {
  const actual = attributesOf(span);
  for (const [key, value] of Object.entries(expected)) {
    expect(actual[key], `${span.name}: attribute ${key}`).toEqual(value);
  }
}

function onlySpan(spans: OtlpSpan[], description: string, matches: (span: OtlpSpan) => boolean): OtlpSpan {
  const found = spans.filter(matches);
  expect(found, `exactly one ${description} span among ${JSON.stringify(spans.map((span) => span.name))}`).toHaveLength(1);
  return found[0]!;
}

function expectNoCapturedContent(): void {
  const exported = JSON.stringify(receiver.received);
  expect(exported.length).toBeGreaterThan(0);
  expect(exported).not.toContain(SECRET_PROMPT);
  expect(exported).not.toContain("zebras");
  expect(exported).not.toContain("gen_ai.input.messages");
  expect(exported).not.toContain("gen_ai.output.messages");
}

describe("OpenTelemetry export from a running gateway", () => {
  it("a non-streamed answer: SERVER span, CLIENT chat child with GenAI attributes, token and cost metrics", async () => {
    const openai = await startTelemetryGateway();
    rig.mocks.openai.enqueue({
      kind: "text",
      text: SECRET_ANSWER,
      model: "gpt-4o-2024-08-06",
      usage: { prompt_tokens: 1200, completion_tokens: 42, cached_tokens: 1024 },
    });
    const { data, response } = await openai.chat.completions
      .create({ model: "gpt", messages: [{ role: "user", content: SECRET_PROMPT }], max_tokens: 64, temperature: 0.5 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(SECRET_ANSWER);
    expect(response.headers.get("x-tollgate-cost-usd")).toBe("0.00214");
    const requestId = response.headers.get("x-tollgate-request-id");
    expect(requestId).toMatch(/^req_/);
    // The prompt did go upstream, so its absence from the telemetry below means something.
    expect(JSON.stringify(rig.mocks.openai.requests.at(-1)?.body)).toContain(SECRET_PROMPT);

    await closeGatewayAndCollect();

    // Traces
    const spans = receiver.spans();
    expect(spans.map((span) => span.name).sort()).toEqual(["POST /v1/chat/completions", "chat gpt-4o"]);
    const server = onlySpan(spans, "SERVER", (span) => span.kind === OTLP_SPAN_KIND_SERVER);
    const client = onlySpan(spans, "CLIENT", (span) => span.kind === OTLP_SPAN_KIND_CLIENT);

    expect(server.name).toBe("POST /v1/chat/completions");
    expect(server.parentSpanId ?? "").toBe("");
    expect(server.status?.code ?? 0).not.toBe(OTLP_STATUS_ERROR);
    expectAttributes(server, {
      "http.request.method": "POST",
      "url.path": "/v1/chat/completions",
      "tollgate.request_id": requestId,
      "http.response.status_code": 200,
      "tollgate.route": "gpt",
      "tollgate.key_id": "app",
      "tollgate.team": "search",
      // 176 × 2500 + 1024 × 1250 + 42 × 10,000 = 2,140,000 nano-dollars.
      "tollgate.cost_usd": 0.00214,
      "tollgate.estimated": false,
      "tollgate.unpriced": false,
    });
    expect(attributesOf(server)).not.toHaveProperty("error.type");

    expect(client.name).toBe("chat gpt-4o");
    expect(client.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(client.traceId).toBe(server.traceId);
    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.spanId).not.toBe(server.spanId);
    expect(client.status?.code ?? 0).not.toBe(OTLP_STATUS_ERROR);
    expectAttributes(client, {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.request.max_tokens": 64,
      "gen_ai.request.temperature": 0.5,
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.response.finish_reasons": ["stop"],
      "server.address": "api.openai.com",
      "server.port": 443,
      // The convention's input count includes the cached tokens.
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 42,
      "gen_ai.usage.cache_read.input_tokens": 1024,
      "tollgate.provider": "openai",
    });
    // Not a stream: no first chunk to time.
    expect(attributesOf(client)).not.toHaveProperty("gen_ai.response.time_to_first_chunk");
    expect(attributesOf(client)).not.toHaveProperty("error.type");
    expect(attributesOf(client)["gen_ai.response.id"]).toMatch(/^chatcmpl-/);

    expectNoCapturedContent();

    // Metrics
    const metrics = receiver.metrics();
    const answered = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
    };

    const tokenUsage = metrics.get("gen_ai.client.token.usage");
    expect(tokenUsage?.unit).toBe("{token}");
    const tokenPoints = tokenUsage?.histogram?.dataPoints ?? [];
    expect(tokenPoints).toHaveLength(2);
    const input = pointWith(tokenPoints, { ...answered, "gen_ai.token.type": "input" });
    const output = pointWith(tokenPoints, { ...answered, "gen_ai.token.type": "output" });
    expect([input.sum, Number(input.count), output.sum, Number(output.count)]).toEqual([1200, 1, 42, 1]);
    expect(input.explicitBounds).toEqual(SPEC_TOKEN_BUCKETS);
    expect(output.explicitBounds).toEqual(SPEC_TOKEN_BUCKETS);

    const duration = metrics.get("gen_ai.client.operation.duration");
    expect(duration?.unit).toBe("s");
    const durationPoint = pointWith(duration?.histogram?.dataPoints ?? [], answered);
    expect(Number(durationPoint.count)).toBe(1);
    expect(durationPoint.sum).toBeGreaterThan(0);
    expect(durationPoint.explicitBounds).toEqual(SPEC_SECONDS_BUCKETS);

    // Only streams have a first chunk.
    expect(metrics.get("gen_ai.client.operation.time_to_first_chunk")?.histogram?.dataPoints ?? []).toHaveLength(0);

    const cost = metrics.get("tollgate.cost");
    expect(cost?.unit).toBe("{nanodollar}");
    expect(cost?.sum?.isMonotonic).toBe(true);
    const costPoint = pointWith(cost?.sum?.dataPoints ?? [], {
      "tollgate.route": "gpt",
      "tollgate.team": "search",
      "tollgate.key_id": "app",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.provider.name": "openai",
      "tollgate.provider": "openai",
    });
    expect(Number(costPoint.asInt)).toBe(2_140_000); // nano-dollars, an integer sum
  });

  it("a streamed fallback: the failed OpenAI attempt and the Anthropic answer as two CLIENT spans under one SERVER span", async () => {
    const openai = await startTelemetryGateway();
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500, message: "the OpenAI mock is down" });
    rig.mocks.anthropic.enqueue({
      kind: "text",
      chunks: ["fall", "back"],
      model: "claude-sonnet-4-6-20260101",
      usage: { input_tokens: 20, output_tokens: 2 },
      delayMsBetweenChunks: 5,
    });
    const { data: stream, response } = await openai.chat.completions
      .create({ model: "gpt-then-claude", stream: true, max_tokens: 100, messages: [{ role: "user", content: SECRET_PROMPT }] })
      .withResponse();
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("fallback");
    expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");
    expect(rig.mocks.openai.requests).toHaveLength(1);
    expect(rig.mocks.anthropic.requests).toHaveLength(1);
    const requestId = response.headers.get("x-tollgate-request-id");

    await closeGatewayAndCollect();

    // Traces
    const spans = receiver.spans();
    const server = onlySpan(spans, "SERVER", (span) => span.kind === OTLP_SPAN_KIND_SERVER);
    // Nothing but the request's own trace: the Anthropic SDK's own tracing is off in the adapter
    // (it would export a second `anthropic.messages.create` span for the same call).
    expect(spans.every((span) => span.traceId === server.traceId)).toBe(true);
    const trace = spans;
    expect(trace.map((span) => span.name).sort()).toEqual(["POST /v1/chat/completions", "chat claude-sonnet-4-6", "chat gpt-4o"]);
    const failed = onlySpan(trace, "chat gpt-4o", (span) => span.name === "chat gpt-4o");
    const answered = onlySpan(trace, "chat claude-sonnet-4-6", (span) => span.name === "chat claude-sonnet-4-6");

    expect(server.name).toBe("POST /v1/chat/completions");
    expect(server.status?.code ?? 0).not.toBe(OTLP_STATUS_ERROR);
    expectAttributes(server, {
      "tollgate.request_id": requestId,
      "http.response.status_code": 200,
      "tollgate.route": "gpt-then-claude",
      "tollgate.key_id": "app",
      "tollgate.team": "search",
      // Billed for the answer only: 20 × 3000 + 2 × 15,000 = 90,000 nano-dollars.
      "tollgate.cost_usd": 0.00009,
    });

    for (const client of [failed, answered]) {
      expect(client.kind, `${client.name}: kind`).toBe(OTLP_SPAN_KIND_CLIENT);
      expect(client.traceId, `${client.name}: traceId`).toBe(server.traceId);
      expect(client.parentSpanId, `${client.name}: parent`).toBe(server.spanId);
    }
    expect(failed.spanId).not.toBe(answered.spanId);

    expect(failed.status?.code).toBe(OTLP_STATUS_ERROR);
    // The provider's own error text may quote the prompt: not exported without content capture.
    expect(failed.status?.message).toBe("the call failed: upstream");
    expect(JSON.stringify(receiver.received)).not.toContain("the OpenAI mock is down");
    const failedAttributes = attributesOf(failed);
    expect(typeof failedAttributes["error.type"]).toBe("string");
    expect(failedAttributes["error.type"]).not.toBe("");
    expectAttributes(failed, { "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "tollgate.provider": "openai" });
    // It never answered, so it has no usage or response attributes.
    expect(failedAttributes).not.toHaveProperty("gen_ai.usage.output_tokens");
    expect(failedAttributes).not.toHaveProperty("gen_ai.response.model");

    expect(answered.status?.code ?? 0).not.toBe(OTLP_STATUS_ERROR);
    expect(attributesOf(answered)).not.toHaveProperty("error.type");
    expectAttributes(answered, {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-6",
      "gen_ai.request.max_tokens": 100,
      "gen_ai.response.model": "claude-sonnet-4-6-20260101",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 20,
      "gen_ai.usage.output_tokens": 2,
      "tollgate.provider": "anthropic",
    });
    const spanFirstChunk = attributesOf(answered)["gen_ai.response.time_to_first_chunk"];
    expect(typeof spanFirstChunk).toBe("number");
    expect(spanFirstChunk as number).toBeGreaterThan(0);

    expectNoCapturedContent();

    // Metrics: the request is metered once, against the target that answered.
    const metrics = receiver.metrics();
    const anthropicAnswer = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-6",
      "gen_ai.response.model": "claude-sonnet-4-6-20260101",
    };
    const firstChunk = metrics.get("gen_ai.client.operation.time_to_first_chunk");
    expect(firstChunk?.unit).toBe("s");
    const firstChunkPoints = firstChunk?.histogram?.dataPoints ?? [];
    expect(firstChunkPoints).toHaveLength(1);
    const firstChunkPoint = pointWith(firstChunkPoints, anthropicAnswer);
    expect(Number(firstChunkPoint.count)).toBe(1);
    // The span and the metric time the same first chunk.
    expect(firstChunkPoint.sum).toBe(spanFirstChunk);
    expect(firstChunkPoint.explicitBounds).toEqual(SPEC_SECONDS_BUCKETS);

    // The failed OpenAI call has an operation-duration point of its own, with its error type.
    const durationPoints = metrics.get("gen_ai.client.operation.duration")?.histogram?.dataPoints ?? [];
    expect(durationPoints).toHaveLength(2);
    const failedDuration = pointWith(durationPoints, { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "error.type": failedAttributes["error.type"] });
    expect(Number(failedDuration.count)).toBe(1);
    expect(failedDuration.sum).toBeGreaterThan(0);

    const tokenPoints = metrics.get("gen_ai.client.token.usage")?.histogram?.dataPoints ?? [];
    expect(tokenPoints).toHaveLength(2);
    expect(pointWith(tokenPoints, { ...anthropicAnswer, "gen_ai.token.type": "input" }).sum).toBe(20);
    expect(pointWith(tokenPoints, { ...anthropicAnswer, "gen_ai.token.type": "output" }).sum).toBe(2);

    const costPoint = pointWith(metrics.get("tollgate.cost")?.sum?.dataPoints ?? [], {
      "tollgate.route": "gpt-then-claude",
      "tollgate.team": "search",
      "tollgate.key_id": "app",
      "gen_ai.request.model": "claude-sonnet-4-6",
      "gen_ai.provider.name": "anthropic",
      "tollgate.provider": "anthropic",
    });
    expect(Number(costPoint.asInt)).toBe(90_000); // nano-dollars, an integer sum
  });
});
