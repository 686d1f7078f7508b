import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// Failures of tollgate's own provider account are not the client's to fix.
// adapters/shared/map-provider-error.ts used to map Anthropic's 402 billing_error with "other 4xx: the
// request itself is wrong" (400 invalid_request_error, no fallback), and OpenAI's 429
// insufficient_quota as an ordinary rate limit (429 rate_limit_exceeded + retry-after, which the
// client SDKs retry; REFERENCE.md: "quota exhaustion is also 429 insufficient_quota (do not retry it)").

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway(base);
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});
beforeEach(() => {
  mocks.openai.reset();
  mocks.anthropic.reset();
});

const post = (path: string, body: object) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("Anthropic 402 billing_error (tollgate's Anthropic account is out of credit)", () => {
  it("is a provider failure (502 api_error), not a 400 telling the client its request is invalid", async () => {
    mocks.anthropic.enqueue({ kind: "http-error", status: 402 });
    const response = await post("/v1/messages", { model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect({ status: response.status, type: body.error.type }).toEqual({ status: 502, type: "api_error" });
  });
});

describe("OpenAI 429 insufficient_quota (tollgate's OpenAI account has no quota left)", () => {
  it("keeps its code, so the client's SDK is not told to retry a rate limit", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details." });
    const response = await post("/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "hi" }] });
    const body = await response.json();
    expect(body.error.code).not.toBe("rate_limit_exceeded");
  });
});
