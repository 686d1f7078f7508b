import { APIError } from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { mapProviderError } from "../adapters/shared/map-provider-error.ts";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Anthropic tells an account that is out of credit, or past its own monthly spend limit, with
// HTTP 400 invalid_request_error — not 402 billing_error (captured bodies, e.g.
// anthropics/claude-code#66314, #4208, continuedev/continue#5499; anthropics/claude-code#38035, #2127):
//   400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}
//   400 {"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."}}
// It is tollgate's provider account that is at fault, not the client's request: another target
// (OpenAI, another Anthropic account) may still answer, and the client must not be told its request is invalid.

const CREDIT = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
const LIMIT = "You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.";

const context = { provider: "anthropic", apiKey: "sk-ant-test", keyVariable: "ANTHROPIC_API_KEY" };
const anthropic400 = (message: string) =>
  APIError.generate(400, { type: "error", error: { type: "invalid_request_error", message }, request_id: "req_011CbrFTcXhtiMzr3s6EocF7" }, undefined, new Headers());

describe("Anthropic's 400 for an account out of credit / past its usage limit", () => {
  it.each([CREDIT, LIMIT])("is a provider-account failure another target may fix, not the client's invalid request: %s", (message) => {
    const mapped = mapProviderError(anthropic400(message), context);
    expect({ kind: mapped.kind, retryable: mapped.retryable }).toEqual({ kind: "upstream", retryable: true });
  });

  const rig = useMockedGateway({
    "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
  });

  it("a route falls back to its next target instead of answering the client 400", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 400, type: "invalid_request_error", message: CREDIT });
    rig.mocks.openai.enqueue({ kind: "text", text: "from the fallback" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "openai" });
    expect(body.choices[0].message.content).toBe("from the fallback");
  });
});
