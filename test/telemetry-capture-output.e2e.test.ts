// With "telemetry": {"captureContent": true} the operator opted in to prompt AND answer text
// (GenAI spans: gen_ai.input.messages and gen_ai.output.messages, both Opt-In). The answer,
// streamed or not, is on the chat span. It used to be missing: nothing handed it to the span.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { testConfig } from "./support/gateway.ts";
import { decodeAttributes, type OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const OTLP_SPAN_KIND_CLIENT = 3;
const rig = useTelemetryGateway();
const { receiver } = rig;

async function start(): Promise<OpenAI> {
  return (await rig.start({ ...testConfig(), telemetry: { captureContent: true } })).openai;
}

async function chatSpan(): Promise<OtlpSpan> {
  await rig.close();
  await receiver.waitFor(() => receiver.spans().some((span) => span.kind === OTLP_SPAN_KIND_CLIENT), "a CLIENT span");
  const spans = receiver.spans().filter((span) => span.kind === OTLP_SPAN_KIND_CLIENT);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe("captureContent: true puts the answer on the chat span", () => {
  it("non-streamed: gen_ai.output.messages holds the answer", async () => {
    const openai = await start();
    rig.mocks.openai.enqueue({ kind: "text", text: "Zebras are striped." });
    await openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "tell me about zebras" }] });
    const attributes = decodeAttributes((await chatSpan()).attributes);
    // The prompt side works: the opt-in is on.
    expect(String(attributes["gen_ai.input.messages"])).toContain("tell me about zebras");
    expect(attributes["gen_ai.output.messages"], "gen_ai.output.messages").toBeDefined();
    expect(JSON.parse(String(attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Zebras are striped." }], finish_reason: "stop" },
    ]);
  });

  it("streamed: gen_ai.output.messages holds the streamed answer", async () => {
    const openai = await start();
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["Zebras ", "are ", "striped."] });
    const stream = await openai.chat.completions.create({ model: "claude", stream: true, messages: [{ role: "user", content: "tell me about zebras" }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Zebras are striped.");
    const attributes = decodeAttributes((await chatSpan()).attributes);
    expect(String(attributes["gen_ai.input.messages"])).toContain("tell me about zebras");
    expect(attributes["gen_ai.output.messages"], "gen_ai.output.messages").toBeDefined();
    expect(String(attributes["gen_ai.output.messages"])).toContain("Zebras are striped.");
  });
});
