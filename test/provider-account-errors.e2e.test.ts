import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Failures of tollgate's own provider account are not the client's to fix.
// adapters/shared/map-provider-error.ts used to map Anthropic's 402 billing_error with "other 4xx: the
// request itself is wrong" (400 invalid_request_error, no fallback), and OpenAI's 429
// insufficient_quota as an ordinary rate limit (429 rate_limit_exceeded + retry-after, which the
// client SDKs retry; REFERENCE.md: "quota exhaustion is also 429 insufficient_quota (do not retry it)").

const rig = useMockedGateway();

describe("Anthropic 402 billing_error (tollgate's Anthropic account is out of credit)", () => {
  it("is a provider failure (502 api_error), not a 400 telling the client its request is invalid", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 402 });
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect({ status: response.status, type: body.error.type }).toEqual({ status: 502, type: "api_error" });
    expect(body.error.message).toContain("check the provider account's plan and billing");
  });
});

describe("OpenAI 429 insufficient_quota (tollgate's OpenAI account has no quota left)", () => {
  it("is a 502 that keeps its code and sends no retry-after, so the client's SDK is not told to wait out a rate limit", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details." });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect({ status: response.status, code: body.error.code, retryAfter: response.headers.get("retry-after") }).toEqual({ status: 502, code: "insufficient_quota", retryAfter: null });
  });
});

describe("a target whose provider refuses tollgate's key (401, 403) or does not know its model (404)", () => {
  // The route's configuration, not the client's request: the next target answers. Was: final.
  it.each([401, 403, 404])("HTTP %i from OpenAI: the route falls back to Anthropic", async (status) => {
    rig.mocks.openai.enqueue({ kind: "http-error", status });
    rig.mocks.anthropic.enqueue({ kind: "text", text: "from the fallback" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt-then-claude", messages: [{ role: "user", content: "hi" }] });
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "anthropic" });
    expect((await response.json()).choices[0].message.content).toBe("from the fallback");
  });

  it("alone on its route: a 502 naming the variable to check", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 401 });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toBe('provider "openai" rejected tollgate\'s credentials (HTTP 401); check OPENAI_API_KEY');
  });
});
