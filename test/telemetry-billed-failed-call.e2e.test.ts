import { describe, expect, it } from "vitest";
import { APP_KEY, testConfig } from "./support/gateway.ts";
import { decodeAttributes } from "./support/otlp-receiver.ts";
import { useTelemetryGateway } from "./support/telemetry-gateway.ts";

// A call the provider bills though it failed: Claude sent message_start (10 input tokens), fell
// silent, and tollgate's deadline cut it; the route then fell back to gpt-4o. The ledger bills the
// cut call, but its CLIENT span had no gen_ai.usage.* at all, so tokens summed from traces fell
// short of the bill (found by review).

const OTLP_SPAN_KIND_CLIENT = 3;
const rig = useTelemetryGateway();
const { receiver } = rig;

function fallbackConfig() {
  const base = testConfig();
  return {
    ...base,
    providers: { ...base.providers, anthropic: { ...base.providers.anthropic, timeoutMs: 500 } },
    routes: { ...base.routes, "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] } },
  };
}

describe("a billed call that failed", () => {
  it("has the usage it was billed for on its CLIENT span", async () => {
    const { gateway } = await rig.start(fallbackConfig());
    // The stand-in's message_start counts the prompt's words as input tokens: 10.
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] }),
    });
    expect(await response.text()).toContain("rescued");
    await rig.close();
    await receiver.waitFor(() => receiver.spans().filter((span) => span.kind === OTLP_SPAN_KIND_CLIENT).length === 2, "two CLIENT spans");
    const cut = receiver.spans().find((span) => span.name === "chat claude-sonnet-4-6")!;
    expect(cut.status?.code).toBe(2);
    expect(decodeAttributes(cut.attributes)).toMatchObject({ "error.type": "timeout", "gen_ai.usage.input_tokens": 10 });
  });
});
