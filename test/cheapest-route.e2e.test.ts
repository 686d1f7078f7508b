import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, testConfig, useMockedGateway, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// The "cheapest" strategy through the gateway, with both SDKs' wire formats from msw: the target
// tried first is the one this request is expected to cost least on, a failure still falls back,
// and a target whose recent streams were slower than the route's latency goal is tried last.

const ask = (model: string, extra: object = {}) => ({ model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 100, ...extra });

describe('routes with "strategy": "cheapest"', () => {
  const rig = useMockedGateway({
    thrifty: { strategy: "cheapest", targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o-mini" }] },
    "thrifty-fast": { strategy: "cheapest", latencyGoalMs: 80, targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }, { provider: "openai", model: "gpt-4.1-nano" }] },
  });

  it("sends the request to the target it is expected to cost least on, though written second", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "cheap hello" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty"));
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "openai" });
    expect((await response.json()).choices[0].message.content).toBe("cheap hello");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("falls back to the dearer target when the cheaper one fails, and the record says so", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500 });
    rig.mocks.anthropic.enqueue({ kind: "text", text: "dear hello" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty"));
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "anthropic" });
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.fallbackFrom).toEqual([{ provider: "openai", model: "gpt-4o-mini", errorType: "upstream" }]);
  });

  it("tries a target whose streams began slower than the latency goal after the others, for streams only", async () => {
    // gpt-4.1-nano is the cheaper; its streams' first tokens come 200 ms after their role chunks,
    // three times (fewer calls are not yet a judgement).
    for (let i = 0; i < 3; i++) {
      rig.mocks.openai.enqueue({ kind: "text", chunks: ["slow", " hello"], delayMsBetweenChunks: 200 });
      const slow = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty-fast", { stream: true }));
      await slow.text();
      expect(slow.headers.get("x-tollgate-provider")).toBe("openai");
    }

    rig.mocks.anthropic.enqueue({ kind: "text", text: "fast hello" });
    const second = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty-fast", { stream: true }));
    expect(await second.text()).toContain("fast");
    expect(second.headers.get("x-tollgate-provider")).toBe("anthropic");

    // A whole answer is judged by whole answers' times, of which gpt-4.1-nano has none yet.
    rig.mocks.openai.enqueue({ kind: "text", text: "whole hello" });
    const whole = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty-fast"));
    expect(whole.headers.get("x-tollgate-provider")).toBe("openai");
  });
});

describe("a latency goal, with streams committed by the keep-alive timer before their first token", () => {
  // Used to be wrong: the router's time to commit was taken as the target's latency, so a model
  // silent after its role chunk looked as fast as the keep-alive interval (0.1 s here).
  let mocks: MockProviders;
  let gateway: TestGateway;
  beforeAll(async () => {
    mocks = startMockProviders();
    const base = testConfig();
    gateway = await startTestGateway({
      ...base,
      server: { ...base.server, streamKeepAliveSeconds: 0.1 },
      routes: { ...base.routes, fast: { strategy: "cheapest", latencyGoalMs: 300, targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }, { provider: "openai", model: "gpt-4.1-nano" }] } },
    });
  });
  afterAll(async () => {
    await gateway.close();
    mocks.close();
  });

  it("judges the target by the time to its first token, as its record has it", async () => {
    for (let i = 0; i < 3; i++) {
      mocks.openai.enqueue({ kind: "text", chunks: ["slow"], delayMsBetweenChunks: 400 });
      const slow = await postJson(gateway, "/v1/chat/completions", ask("fast", { stream: true }));
      await slow.text();
      expect(slow.headers.get("x-tollgate-provider")).toBe("openai");
      const record = await waitForRecord(gateway, slow.headers.get("x-tollgate-request-id")!);
      expect(record.upstreamTtftMs!).toBeGreaterThan(350);
    }
    mocks.anthropic.enqueue({ kind: "text", text: "fast hello" });
    const fourth = await postJson(gateway, "/v1/chat/completions", ask("fast", { stream: true }));
    await fourth.text();
    expect(fourth.headers.get("x-tollgate-provider")).toBe("anthropic");
  });
});

describe("a latency goal, with a cheaper target that keeps timing out", () => {
  // Used to be wrong: only answers were timed, so a target that never answered in time was never
  // demoted, and every request waited out its timeout before the fallback answered.
  const rig = useMockedGateway(
    { steady: { strategy: "cheapest", latencyGoalMs: 300, targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }, { provider: "openai", model: "gpt-4.1-mini" }] } },
    [],
    { openai: { timeoutMs: 500 } },
  );

  it("is tried after the others once three of its calls ran into the deadline", async () => {
    for (let i = 0; i < 3; i++) {
      rig.mocks.openai.enqueue({ kind: "stall", afterChunks: 0 });
      rig.mocks.anthropic.enqueue({ kind: "text", text: "fallback hello" });
      const response = await postJson(rig.gateway, "/v1/chat/completions", ask("steady"));
      await response.text();
      expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");
    }
    expect(rig.mocks.openai.requests).toHaveLength(3);
    rig.mocks.anthropic.enqueue({ kind: "text", text: "straight to the steady one" });
    const fourth = await postJson(rig.gateway, "/v1/chat/completions", ask("steady"));
    expect((await fourth.json()).choices[0].message.content).toBe("straight to the steady one");
    expect(rig.mocks.openai.requests).toHaveLength(3);
  });
});
