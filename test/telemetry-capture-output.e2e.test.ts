// With "telemetry": {"captureContent": true} the operator opted in to prompt AND answer text
// (GenAI spans: gen_ai.input.messages and gen_ai.output.messages, both Opt-In). The answer,
// streamed or not, is on the chat span. It used to be missing: nothing handed it to the span.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { ANTHROPIC_KEY, APP_KEY, OPENAI_KEY, testConfig } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { createOtlpReceiver, decodeAttributes, type OtlpSpan } from "./support/otlp-receiver.ts";

const OTLP_SPAN_KIND_CLIENT = 3;
let mocks: MockProviders;
const receiver = createOtlpReceiver();
let receiverUrl = "";
let storeDirectory = "";
let gateway: RunningGateway | undefined;

beforeAll(async () => {
  mocks = startMockProviders();
  receiverUrl = await receiver.listen();
  storeDirectory = await mkdtemp(join(tmpdir(), "tollgate-review-capture-"));
});
beforeEach(() => {
  receiver.received.length = 0;
});
afterEach(async () => {
  const running = gateway;
  gateway = undefined;
  await running?.close();
  mocks.openai.reset();
  mocks.anthropic.reset();
});
afterAll(async () => {
  mocks?.close();
  await receiver.close();
  await rm(storeDirectory, { recursive: true, force: true });
});

async function start(): Promise<OpenAI> {
  gateway = await startGateway({
    config: { ...testConfig(), telemetry: { captureContent: true }, store: { path: join(storeDirectory, `ledger-${Math.random()}.jsonl`) } },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_METRIC_EXPORT_INTERVAL: "600000" },
    log: () => {},
  });
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0 });
}

async function chatSpan(): Promise<OtlpSpan> {
  const running = gateway;
  gateway = undefined;
  await running?.close();
  await receiver.waitFor(() => receiver.spans().some((span) => span.kind === OTLP_SPAN_KIND_CLIENT), "a CLIENT span");
  const spans = receiver.spans().filter((span) => span.kind === OTLP_SPAN_KIND_CLIENT);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe("captureContent: true puts the answer on the chat span", () => {
  it("non-streamed: gen_ai.output.messages holds the answer", async () => {
    const openai = await start();
    mocks.openai.enqueue({ kind: "text", text: "Zebras are striped." });
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
    mocks.anthropic.enqueue({ kind: "text", chunks: ["Zebras ", "are ", "striped."] });
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
