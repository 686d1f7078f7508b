import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A usage count no server could mean (docs/metering.md) is treated as not reported. Used to be
// wrong for OpenAI-format usage: the conversion clamped it first (a cached_tokens of 2^64 − 1
// became the whole prompt billed as cache reads; a prompt_tokens of −1 became 0 input), so the
// meter never saw it.

describe("implausible OpenAI-format usage counts", () => {
  const rig = useMockedGateway();

  it("an unsigned −1 cached_tokens bills the prompt as uncached input, flagged estimated", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "hi there", usage: { prompt_tokens: 1000, completion_tokens: 2, cached_tokens: 2 ** 64 - 1 } });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hello" }] });
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.usage).toMatchObject({ inputTokens: 1000, cacheReadTokens: 0, outputTokens: 2 });
    expect(record.estimated).toBe(true);
    // gpt-4o: 1000 × 2,500 + 2 × 10,000 nano-dollars.
    expect(record.cost.totalNano).toBe(2_520_000);
  });

  it("a negative prompt_tokens is counted from the request, not billed as 0", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "hi there", usage: { prompt_tokens: -1, completion_tokens: 2 } });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hello there, please count these words of mine" }] });
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.estimated).toBe(true);
    expect(record.usage.inputTokens).toBeGreaterThan(0);
    expect(record.cost.totalNano).toBe(record.usage.inputTokens * 2_500 + 2 * 10_000);
  });
});
