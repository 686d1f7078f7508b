import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Anthropic answers a long-context prompt on an account without "extra usage" with a 429 that is
// not a rate limit but a standing gate on the account's plan (captured bodies, e.g.
// anthropics/claude-code#42616, router-for-me/CLIProxyAPI#2464):
//   429 {"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}}
// Retrying the same prompt never helps. Used to be wrong: tollgate passed it on as a 429 with
// retry-after, which the official SDKs retry, and which tells an agent nothing about trimming.

const GATE = "Extra usage is required for long context requests.";

describe("Anthropic's 429 'Extra usage is required for long context requests'", () => {
  const rig = useMockedGateway({
    "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
  });
  const ask = (model: string) => ({ model, messages: [{ role: "user", content: "a very long prompt" }] });

  it("falls back to the route's next target", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429, type: "rate_limit_error", message: GATE });
    rig.mocks.openai.enqueue({ kind: "text", text: "from the fallback" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", ask("claude-then-gpt"));
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "openai" });
    expect((await response.json()).choices[0].message.content).toBe("from the fallback");
  });

  it("on the last target, an OpenAI client gets a 400 context_length_exceeded, with no retry-after", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429, type: "rate_limit_error", message: GATE });
    const response = await postJson(rig.gateway, "/v1/chat/completions", ask("claude"));
    const body = await response.json();
    expect({ status: response.status, retryAfter: response.headers.get("retry-after") }).toEqual({ status: 400, retryAfter: null });
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "context_length_exceeded", param: "messages" });
    expect(body.error.message).toContain("send a shorter prompt");
  });

  it("an Anthropic client gets its own 400 invalid_request_error", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429, type: "rate_limit_error", message: GATE });
    const response = await postJson(rig.gateway, "/v1/messages", { ...ask("claude"), max_tokens: 100 });
    const body = await response.json();
    expect(response.status).toBe(400);
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain("not a rate limit");
  });

  it("an ordinary Anthropic 429 is still a rate limit with its retry-after", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", retryAfter: 9 });
    const response = await postJson(rig.gateway, "/v1/chat/completions", ask("claude"));
    expect({ status: response.status, retryAfter: response.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "9" });
  });
});
