import { describe, expect, it } from "vitest";
import { APP_KEY } from "./support/gateway.ts";
import { decodeAttributes } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

// Agents call count_tokens before most turns. Claude's count is a call to Anthropic like a chat,
// and it had no CLIENT span and carried no trace context: the trace showed the gateway's SERVER
// span alone, with the provider's time inside it unaccounted for.

const rig = useTelemetryGateway();
const SERVER = 2;
const CLIENT = 3;
const traceId = "5b8efff798038103d269b633813fc60c";

async function count(route: string): Promise<Response> {
  const response = await fetch(`${rig.gateway!.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "x-api-key": APP_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", traceparent: `00-${traceId}-eee19b7ec3c1b174-01` },
    body: JSON.stringify({ model: route, messages: [{ role: "user", content: "how many tokens is this" }] }),
  });
  await response.text();
  return response;
}

async function spans() {
  await rig.close();
  await rig.receiver.waitFor(() => rig.receiver.received.some((item) => item.path === "/v1/traces"), "traces");
  const of = (kind: number) => rig.receiver.spans().filter((span) => span.kind === kind);
  return { server: of(SERVER), client: of(CLIENT) };
}

describe("count_tokens on a Claude route", () => {
  it("has a CLIENT span under the request's, with the count, and its trace context goes upstream", async () => {
    await rig.start();
    rig.mocks.anthropic.enqueueCountTokens({ kind: "count", inputTokens: 42 });
    expect((await count("claude")).status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!;
    const { server, client } = await spans();
    expect(client.map((span) => span.name)).toEqual(["count_tokens claude-sonnet-4-6"]);
    const [span] = client;
    expect({ traceId: span!.traceId, parent: span!.parentSpanId }).toEqual({ traceId, parent: server[0]!.spanId });
    expect(decodeAttributes(span!.attributes)).toMatchObject({
      "gen_ai.operation.name": "count_tokens",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-6",
      "gen_ai.usage.input_tokens": 42,
      "tollgate.provider": "anthropic",
    });
    expect(sent.url).toMatch(/\/v1\/messages\/count_tokens$/);
    expect(sent.headers.traceparent).toBe(`00-${traceId}-${span!.spanId}-01`);
  });

  it("marks the span failed with the error's type when Anthropic refuses the count", async () => {
    await rig.start();
    rig.mocks.anthropic.enqueueCountTokens({ kind: "http-error", status: 529 });
    expect((await count("claude")).status).toBeGreaterThanOrEqual(500);
    const { client } = await spans();
    expect(client).toHaveLength(1);
    expect(client[0]!.status?.code).toBe(2);
    expect(decodeAttributes(client[0]!.attributes)["error.type"]).toBe("overloaded");
    expect(decodeAttributes(client[0]!.attributes)["gen_ai.usage.input_tokens"]).toBeUndefined();
  });

  it("has no CLIENT span where tollgate counts for itself (an OpenAI target)", async () => {
    await rig.start();
    const response = await count("gpt");
    expect(response.headers.get("x-tollgate-estimated")).toBe("true");
    const { server, client } = await spans();
    expect(server).toHaveLength(1);
    expect(client).toEqual([]);
  });
});
