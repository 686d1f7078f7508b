import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

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
    // gpt-4.1-nano is the cheaper; its stream's first token comes 200 ms after its role chunk.
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["slow", " hello"], delayMsBetweenChunks: 200 });
    const first = await postJson(rig.gateway, "/v1/chat/completions", ask("thrifty-fast", { stream: true }));
    await first.text();
    expect(first.headers.get("x-tollgate-provider")).toBe("openai");

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
