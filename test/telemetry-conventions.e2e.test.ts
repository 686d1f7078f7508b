import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { decodeAttributes, type OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";
import { APP_KEY, testConfig } from "./support/gateway.ts";

// Attributes the OpenTelemetry conventions ask for that the first telemetry tests did not check.
// Used to be wrong (found by a review of the telemetry against semconv):
// - gen_ai.output.type (Conditionally Required when the request names an output format) and
//   gen_ai.request.frequency_penalty / presence_penalty (Recommended) were never set;
// - a client's W3C traceparent was ignored: the gateway's spans began a trace of their own;
// - the SERVER span lacked url.scheme (Required) and http.route (Conditionally Required, known
//   here), and recorded an unknown method as itself instead of _OTHER (docs/http/http-spans.md);
// - the tollgate.cost counter summed floating-point USD, so three $0.0000125 requests exported
//   0.000037500000000000003: it now counts integer nano-dollars, as the ledger does.

const rig = useTelemetryGateway();
const { receiver } = rig;
const SERVER = 2;
const CLIENT = 3;

async function closeAndCollect(): Promise<void> {
  await rig.close();
  const arrived = (path: string) => receiver.received.some((item) => item.path === path);
  await receiver.waitFor(() => arrived("/v1/traces") && arrived("/v1/metrics"), "traces and metrics");
}
const attributes = (span: OtlpSpan | undefined) => decodeAttributes(span!.attributes);
const spansOfKind = (kind: number) => receiver.spans().filter((span) => span.kind === kind);

describe("the CLIENT span's request attributes", () => {
  it("carry gen_ai.output.type for a JSON answer, and both penalties as sent upstream", async () => {
    const { openai } = await rig.start();
    rig.mocks.openai.enqueue({ kind: "text", text: '{"a":1}' });
    await openai.chat.completions.create({
      model: "gpt",
      messages: [{ role: "user", content: "json please" }],
      response_format: { type: "json_object" },
      frequency_penalty: 0.5,
      presence_penalty: 0.25,
    });
    expect(rig.mocks.openai.requests.at(-1)?.body).toMatchObject({ response_format: { type: "json_object" }, frequency_penalty: 0.5, presence_penalty: 0.25 });
    await closeAndCollect();
    expect(attributes(spansOfKind(CLIENT)[0])).toMatchObject({
      "gen_ai.output.type": "json",
      "gen_ai.request.frequency_penalty": 0.5,
      "gen_ai.request.presence_penalty": 0.25,
    });
  });
});

describe("the SERVER span", () => {
  it("continues the client's W3C trace", async () => {
    const { gateway } = await rig.start();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parent = "00f067aa0ba902b7";
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", traceparent: `00-${traceId}-${parent}-01` },
      body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    await closeAndCollect();
    const [server] = spansOfKind(SERVER);
    expect({ traceId: server!.traceId, parent: server!.parentSpanId }).toEqual({ traceId, parent });
    // The upstream call's span is in the same trace, under the gateway's.
    const [client] = spansOfKind(CLIENT);
    expect({ traceId: client!.traceId, parent: client!.parentSpanId }).toEqual({ traceId, parent: server!.spanId });
  });

  it("has url.scheme and http.route", async () => {
    const { openai } = await rig.start();
    await openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] });
    await closeAndCollect();
    const [server] = spansOfKind(SERVER);
    expect(server!.name).toBe("POST /v1/chat/completions");
    expect(attributes(server)).toMatchObject({ "http.request.method": "POST", "url.scheme": "http", "http.route": "/v1/chat/completions" });
  });

  // GET /v1/models/{model} and the dashboard were named "GET", without http.route (found by review).
  it("names one model's route and the dashboard by their templates, never by the model asked for", async () => {
    const { gateway } = await rig.start();
    for (const path of ["/v1/models/gpt", "/admin"]) {
      const response = await fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${APP_KEY}` } });
      expect(response.status, path).toBe(200);
      await response.text();
    }
    // No chat, so no metrics: traces only.
    await rig.close();
    await receiver.waitFor(() => spansOfKind(SERVER).length === 2, "two SERVER spans");
    const servers = spansOfKind(SERVER).map((span) => [span.name, attributes(span)["http.route"], attributes(span)["url.path"]]);
    expect(servers).toEqual([
      ["GET /v1/models/{model}", "/v1/models/{model}", "/v1/models/gpt"],
      ["GET /admin", "/admin", "/admin"],
    ]);
  });

  it("records a method outside HTTP's own as _OTHER, keeping the original apart", async () => {
    const { gateway } = await rig.start();
    const url = new URL(gateway.url);
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest({ host: url.hostname, port: url.port, method: "PROPFIND", path: "/healthz" }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      sent.on("error", reject);
      sent.end();
    });
    expect(status).toBe(405);
    await rig.close();
    await receiver.waitFor(() => receiver.received.some((item) => item.path === "/v1/traces"), "traces");
    const [server] = spansOfKind(SERVER);
    expect(server!.name).toBe("HTTP /healthz");
    expect(attributes(server)).toMatchObject({ "http.request.method": "_OTHER", "http.request.method_original": "PROPFIND", "http.route": "/healthz" });
  });
});

describe("the upstream call", () => {
  // vLLM and SGLang continue a trace from the traceparent of the request they serve.
  it("carries its CLIENT span's W3C trace context, on every adapter, and never the client's baggage", async () => {
    const config = testConfig();
    const { gateway } = await rig.start({
      ...config,
      // An OpenAI-compatible decoder, reached here through the OpenAI stand-in's address.
      providers: { ...config.providers, decoder: { type: "openai-compatible", baseUrl: "https://api.openai.com/v1" } },
      routes: { ...config.routes, decoder: { targets: [{ provider: "decoder", model: "tiny" }] } },
    });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const ask = (model: string, stream: boolean) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", traceparent: `00-${traceId}-b7ad6b7169203331-01`, baggage: "tenant.secret=do-not-forward" },
        body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
      }).then((response) => response.text());
    await ask("gpt", false);
    await ask("claude", true);
    await ask("decoder", false);
    const sent = [rig.mocks.openai.requests[0]!, rig.mocks.anthropic.requests[0]!, rig.mocks.openai.requests[1]!].map((request) => request.headers);
    await closeAndCollect();
    const clients = spansOfKind(CLIENT).sort((a, b) => Number(BigInt(a.startTimeUnixNano!) - BigInt(b.startTimeUnixNano!)));
    expect(clients.map((span) => span.name)).toEqual(["chat gpt-4o", "chat claude-sonnet-4-6", "chat tiny"]);
    expect(sent.map((headers) => headers.traceparent)).toEqual(clients.map((span) => `00-${traceId}-${span.spanId}-01`));
    expect(sent.map((headers) => headers.baggage)).toEqual([undefined, undefined, undefined]);
  });
});

describe("a stream the client cut before the provider reported usage", () => {
  // The CLIENT span's gen_ai.usage.* are then tollgate's own count; the token metric leaves such
  // counts out (docs/metering.md), and the span used to show them with nothing to say so.
  it("has its counted usage on the CLIENT span flagged tollgate.usage.estimated, and nothing in the token metric", async () => {
    const { openai } = await rig.start();
    rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 2 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create({ model: "gpt", stream: true, messages: [{ role: "user", content: "one two three" }] }, { signal: controller.signal });
    let seen = 0;
    await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content && ++seen === 2) controller.abort();
    })().catch(() => undefined);
    await rig.gateway!.ledger.flush();
    await closeAndCollect();
    const client = attributes(spansOfKind(CLIENT)[0]);
    expect(client["tollgate.usage.estimated"]).toBe(true);
    expect(client["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    expect(receiver.metrics().get("gen_ai.client.token.usage")?.histogram?.dataPoints ?? []).toHaveLength(0);
  });

  it("a provider's own usage is not flagged", async () => {
    const { openai } = await rig.start();
    await openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] });
    await closeAndCollect();
    expect(attributes(spansOfKind(CLIENT)[0])).not.toHaveProperty("tollgate.usage.estimated");
  });
});

describe("a client's traceparent with its sampled flag off", () => {
  // W3C Trace Context: a traceparent received is sent on to outgoing requests. Used to be dropped:
  // the sampler leaves such a span unrecorded, and only recording spans were injected.
  it("still reaches the upstream call, with the same trace id and the flag still off", async () => {
    const { gateway } = await rig.start();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-00` },
      body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "hi" }] }),
    });
    await response.text();
    expect(rig.mocks.openai.requests[0]!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  });
});

describe("the tollgate.cost counter", () => {
  it("sums requests exactly, in integer nano-dollars", async () => {
    const { openai } = await rig.start();
    const costs: string[] = [];
    for (let i = 0; i < 3; i++) {
      rig.mocks.openai.enqueue({ kind: "text", text: "x", usage: { prompt_tokens: 1, completion_tokens: 1 } });
      const { response } = await openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }).withResponse();
      costs.push(response.headers.get("x-tollgate-cost-usd")!);
    }
    await closeAndCollect();
    // gpt-4o: 1 × 2,500 + 1 × 10,000 nano-dollars a request.
    expect(costs).toEqual(["0.0000125", "0.0000125", "0.0000125"]);
    const cost = receiver.metrics().get("tollgate.cost");
    expect(cost?.unit).toBe("{nanodollar}");
    expect(cost?.sum?.dataPoints ?? []).toHaveLength(1);
    expect(Number(cost!.sum!.dataPoints[0]!.asInt)).toBe(37_500);
  });
});
