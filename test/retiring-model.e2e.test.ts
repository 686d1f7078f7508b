import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { ANTHROPIC_KEY, APP_KEY, OPENAI_KEY, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";

// Claude Sonnet 4.5 retires on 2026-11-30. The Anthropic SDK's messages.create prints a
// two-line deprecation warning to the console on every call to it: behind a gateway, two lines
// per request in the operator's log. tollgate says it once, at start-up, naming the route.

let mocks: MockProviders;
let gateway: RunningGateway;
const logged: string[] = [];
const consoleWarn = vi.spyOn(console, "warn");

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startGateway({
    config: { ...base, routes: { ...base.routes, sonnet45: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }] } }, store: { path: temporaryLedgerPath() } },
    port: 0,
    upstreamTransport: "fetch",
    env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY },
    log: (line: string) => logged.push(line),
  });
});

afterAll(async () => {
  await gateway.close();
  mocks.close();
  consoleWarn.mockRestore();
});

describe("a route on a model that is being retired", () => {
  it("is named once in the start-up log", () => {
    const lines = logged.filter((line) => line.includes("claude-sonnet-4-5"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[tollgate\] warning: routes\.sonnet45: claude-sonnet-4-5 on provider "anthropic" (is|was) retired on 2026-11-30/);
  });

  it("leaves the console quiet on each request, streamed or not", async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: APP_KEY, maxRetries: 0 });
    consoleWarn.mockClear();
    const whole = await client.messages.create({ model: "sonnet45", max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    expect(whole.content[0]).toMatchObject({ type: "text" });
    const streamed = await client.messages.stream({ model: "sonnet45", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: "text" });
    // Both calls reached Claude as claude-sonnet-4-5, streamed and not.
    expect(mocks.anthropic.requests.map((request) => [request.body.model, request.body.stream ?? false])).toEqual([
      ["claude-sonnet-4-5", false],
      ["claude-sonnet-4-5", true],
    ]);
    expect(consoleWarn.mock.calls.map((call) => String(call[0]))).toEqual([]);
  });
});
