// gen_ai.client.operation.duration holds ONE point per upstream call. A failed last (or only)
// call used to be recorded twice: as the attempt failed, and again with the request's record.
// A call cut off because the client left has error.type "cancelled", not the provider's fault.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { decodeAttributes } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const rig = useTelemetryGateway();
const { receiver } = rig;

async function start(): Promise<OpenAI> {
  return (await rig.start()).openai;
}

async function closeAndCollect() {
  await rig.close();
  await receiver.waitFor(() => receiver.received.some((item) => item.path === "/v1/metrics"), "metrics");
}

function durationPoints() {
  const points = receiver.metrics().get("gen_ai.client.operation.duration")?.histogram?.dataPoints ?? [];
  return points.map((point) => ({ attributes: decodeAttributes(point.attributes), count: Number(point.count) }));
}

describe("gen_ai.client.operation.duration: one point per upstream call", () => {
  it("a single-target route whose provider answers 500: one call, one duration point", async () => {
    const openai = await start();
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500, message: "down" });
    const failure = await openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }).catch((error) => error);
    expect(failure.status).toBeGreaterThanOrEqual(500);
    expect(rig.mocks.openai.requests).toHaveLength(1);

    await closeAndCollect();
    const points = durationPoints();
    const total = points.reduce((sum, point) => sum + point.count, 0);
    expect(total, `duration points: ${JSON.stringify(points)}`).toBe(1);
  });

  it("a fallback route whose every target fails: two calls, two duration points", async () => {
    const openai = await start();
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500, message: "down" });
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 529 });
    const failure = await openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "hi" }] }).catch((error) => error);
    expect(failure.status).toBeGreaterThanOrEqual(500);
    expect(rig.mocks.openai.requests).toHaveLength(1);
    expect(rig.mocks.anthropic.requests).toHaveLength(1);

    await closeAndCollect();
    const points = durationPoints();
    const total = points.reduce((sum, point) => sum + point.count, 0);
    expect(total, `duration points: ${JSON.stringify(points)}`).toBe(2);
  });

  it("a client that leaves while the only call is in flight: one call, one duration point", async () => {
    const openai = await start();
    rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 0 });
    const controller = new AbortController();
    const pending = openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }, { signal: controller.signal }).catch((error) => error);
    // Wait until the upstream call is really in flight, then leave.
    const deadline = Date.now() + 5000;
    while (rig.mocks.openai.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await pending;
    // Let the gateway notice the disconnect and commit the record.
    await new Promise((resolve) => setTimeout(resolve, 500));

    await closeAndCollect();
    const points = durationPoints();
    const total = points.reduce((sum, point) => sum + point.count, 0);
    expect(total, `duration points: ${JSON.stringify(points)}`).toBe(1);
    expect(points[0]!.attributes["error.type"]).toBe("cancelled");
  });

  it("a client that leaves a stream half-way: the call's span and its duration point say cancelled", async () => {
    // Was: a stream cut after it began looked like a success in traces and metrics alike.
    const openai = await start();
    rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 2 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create({ model: "gpt", stream: true, messages: [{ role: "user", content: "hi" }] }, { signal: controller.signal });
    let seen = 0;
    try {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content && ++seen === 2) controller.abort();
    } catch {
      // the SDK's abort
    }
    expect(seen).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the gateway notices and commits

    await closeAndCollect();
    const points = durationPoints();
    expect(points.map((point) => [point.count, point.attributes["error.type"]])).toEqual([[1, "cancelled"]]);
    await receiver.waitFor(() => receiver.spans().some((span) => span.name === "chat gpt-4o"), "the chat span");
    const chat = receiver.spans().find((span) => span.name === "chat gpt-4o")!;
    expect(decodeAttributes(chat.attributes)["error.type"]).toBe("cancelled");
    expect(chat.status?.code).toBe(2); // ERROR
  });
});
