import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { postJson, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";

// A provider that answers 200 with its preamble (OpenAI's role chunk, Anthropic's message_start)
// and then goes silent. Nothing has reached the client, so the route's next target answers once
// the first target's `timeoutMs` (counted from the call's start) has passed.
// Was: the preamble started the 200 ms idle clock instead, and its timeout was final: a 504.

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  const deadlines = { timeoutMs: 800, streamIdleTimeoutMs: 200 };
  gateway = await startTestGateway({
    ...base,
    providers: { openai: { ...base.providers.openai, ...deadlines }, anthropic: { ...base.providers.anthropic, ...deadlines } },
    routes: { ...base.routes, "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] } },
  });
});
afterEach(() => {
  mocks.openai.reset();
  mocks.anthropic.reset();
});
afterAll(async () => {
  await gateway.close();
  mocks.close();
});

describe("a stream that stalls after its preamble, before any answer part", () => {
  it("OpenAI role chunk, then silence: the route's next target answers", async () => {
    mocks.openai.enqueue({ kind: "stall", afterChunks: 0 });
    mocks.anthropic.enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "gpt-then-claude", stream: true, messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider"), anthropicCalls: mocks.anthropic.requests.length }).toEqual({
      status: 200,
      provider: "anthropic",
      anthropicCalls: 1,
    });
    expect(text).toContain("rescued");
  });

  it("Anthropic message_start, then silence: the route's next target answers", async () => {
    mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider"), openaiCalls: mocks.openai.requests.length }).toEqual({
      status: 200,
      provider: "openai",
      openaiCalls: 1,
    });
    expect(text).toContain("rescued");
  });
});
