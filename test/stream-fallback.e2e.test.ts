import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// README: "Routes try their targets in order and move to the next on 429, 5xx or a network
// failure before the first token". REFERENCE.md (peer pitfalls): "200-then-error streams never
// fall back (Portkey #1047)"; Anthropic sends `event: error` overloaded_error after HTTP 200.
//
// streamOnRoute() used to commit a stream on its first *part*, the metadata-only `start`
// (Anthropic message_start / OpenAI's role chunk): no token had reached the client, but an
// overloaded_error right after it no longer fell back; and a streamed overloaded_error was not
// retryable. It now commits on the answer's first part.

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({
    ...base,
    routes: {
      ...base.routes,
      "claude-then-gpt": {
        targets: [
          { provider: "anthropic", model: "claude-sonnet-4-6" },
          { provider: "openai", model: "gpt-4o" },
        ],
      },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});
beforeEach(() => {
  mocks.openai.reset();
  mocks.anthropic.reset();
});

describe("a stream that fails after HTTP 200 but before its first token", () => {
  it("Anthropic overloaded_error before any text: the route's next target answers (OpenAI client)", async () => {
    mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 0 });
    mocks.openai.enqueue({ kind: "text", chunks: ["rescued"] });
    const stream = await gateway.openai.chat.completions.create({ model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    let failure: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeUndefined();
    expect(text).toBe("rescued");
    expect(mocks.openai.requests).toHaveLength(1);
  });

  it("(contrast, passes) the same failure on a non-streamed request does fall back (529 before the answer)", async () => {
    mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 0 });
    mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const answer = await gateway.openai.chat.completions.create({ model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }] });
    expect(answer.choices[0]!.message.content).toBe("rescued");
  });

});
