import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// A provider that answers 200 with its preamble (OpenAI's role chunk, Anthropic's message_start)
// and then goes silent. Nothing has reached the client, so the route's next target answers once
// the first target's `timeoutMs` (counted from the call's start) has passed.
// Was: the preamble started the 200 ms idle clock instead, and its timeout was final: a 504.

// Deadlines short enough for a test: an answer must begin within 800 ms, and may go quiet for 200 ms.
const deadlines = { timeoutMs: 800, streamIdleTimeoutMs: 200 };
const rig = useMockedGateway(
  { "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] } },
  [],
  { openai: deadlines, anthropic: deadlines },
);

describe("a stream that stalls after its preamble, before any answer part", () => {
  it.each([
    { preamble: "OpenAI role chunk", stalls: "openai", rescues: "anthropic", route: "gpt-then-claude" },
    { preamble: "Anthropic message_start", stalls: "anthropic", rescues: "openai", route: "claude-then-gpt" },
  ] as const)("$preamble, then silence: the route's next target answers", async ({ stalls, rescues, route }) => {
    rig.mocks[stalls].enqueue({ kind: "stall", afterChunks: 0 });
    rig.mocks[rescues].enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, stream: true, messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider"), rescuerCalls: rig.mocks[rescues].requests.length }).toEqual({
      status: 200,
      provider: rescues,
      rescuerCalls: 1,
    });
    expect(text).toContain("rescued");
  });
});
