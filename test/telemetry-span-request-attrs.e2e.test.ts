// The CLIENT span `chat {model}` describes one upstream call, so its gen_ai.request.* attributes
// are the parameters that call was made with, after the per-target policies: a temperature
// scaled to Anthropic's 0–1, stop sequences trimmed to OpenAI's 4. They used to be the client's.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { APP_KEY } from "./support/gateway.ts";
import { decodeAttributes, type OtlpSpan } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

const OTLP_SPAN_KIND_CLIENT = 3;
const rig = useTelemetryGateway();
const { receiver } = rig;

/** Starts a gateway; its URL, for a client of either dialect. */
async function start(): Promise<string> {
  return (await rig.start()).gateway.url;
}

async function chatSpan(): Promise<OtlpSpan> {
  await rig.close();
  await receiver.waitFor(() => receiver.spans().some((span) => span.kind === OTLP_SPAN_KIND_CLIENT && span.name.startsWith("chat ")), "a CLIENT chat span");
  // Only tollgate's own span: the test's Anthropic SDK client runs in this process and, seeing the
  // global tracer the gateway registered, exports an `anthropic.messages.create` span of its own.
  const spans = receiver.spans().filter((span) => span.kind === OTLP_SPAN_KIND_CLIENT && span.name.startsWith("chat "));
  expect(spans, JSON.stringify(spans.map((s) => [s.name, decodeAttributes(s.attributes)]))).toHaveLength(1);
  return spans[0]!;
}

describe("gen_ai.request.* on the CLIENT span are the parameters sent upstream", () => {
  it("temperature scaled for an Anthropic target", async () => {
    const url = await start();
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: APP_KEY, maxRetries: 0 });
    await openai.chat.completions.create({ model: "claude", temperature: 1.5, max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    const sent = rig.mocks.anthropic.requests.at(-1)?.body as { temperature?: number };
    expect(sent.temperature).toBe(1);
    const attributes = decodeAttributes((await chatSpan()).attributes);
    expect(attributes["gen_ai.request.temperature"], "gen_ai.request.temperature").toBe(sent.temperature);
  });

  it("stop sequences trimmed for an OpenAI target", async () => {
    const url = await start();
    const anthropic = new Anthropic({ baseURL: url, apiKey: APP_KEY, maxRetries: 0 });
    await anthropic.messages.create({
      model: "gpt",
      max_tokens: 50,
      stop_sequences: ["one", "two", "three", "four", "five", "six"],
      messages: [{ role: "user", content: "count" }],
    });
    const sent = rig.mocks.openai.requests.at(-1)?.body as { stop?: string[] };
    expect(sent.stop).toEqual(["one", "two", "three", "four"]);
    const attributes = decodeAttributes((await chatSpan()).attributes);
    expect(attributes["gen_ai.request.stop_sequences"], "gen_ai.request.stop_sequences").toEqual(sent.stop);
  });
});
