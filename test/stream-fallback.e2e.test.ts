import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// README: "Routes try their targets in order and move to the next on 429, 5xx or a network
// failure before the first token". REFERENCE.md (peer pitfalls): "200-then-error streams never
// fall back (Portkey #1047)"; Anthropic sends `event: error` overloaded_error after HTTP 200.
//
// streamOnRoute() used to commit a stream on its first *part*, the metadata-only `start`
// (Anthropic message_start / OpenAI's role chunk): no token had reached the client, but an
// overloaded_error right after it no longer fell back; and a streamed overloaded_error was not
// retryable. It now commits on the answer's first part.

const rig = useMockedGateway({
  "claude-then-gpt": {
    targets: [
      { provider: "anthropic", model: "claude-sonnet-4-6" },
      { provider: "openai", model: "gpt-4o" },
    ],
  },
});

describe("a provider that fails after HTTP 200 but before its first token", () => {
  it("streamed: Anthropic overloaded_error after message_start, and the route's next target answers (OpenAI client)", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["rescued"] });
    const stream = await rig.gateway.openai.chat.completions.create({ model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("rescued");
    expect([rig.mocks.anthropic.requests.length, rig.mocks.openai.requests.length]).toEqual([1, 1]);
  });

  it("not streamed: the same failure falls back too", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const answer = await rig.gateway.openai.chat.completions.create({ model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }] });
    expect(answer.choices[0]!.message.content).toBe("rescued");
    expect([rig.mocks.anthropic.requests.length, rig.mocks.openai.requests.length]).toEqual([1, 1]);
  });
});
