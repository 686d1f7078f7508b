import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { ANTHROPIC_KEY, APP_KEY, ledgerRecords, OPENAI_KEY, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";

// A failure that a retry of the same request cannot fix: the provider has no key in tollgate's
// config, refuses tollgate's key, or refuses tollgate's account for billing. Both official SDKs
// retry a 5xx twice by default, so a client waited out two backoffs for the same answer and the
// ledger held three error records for one call. The answer now says `x-should-retry: false`,
// which both SDKs obey; and an Anthropic client is told `api_error`, not `overloaded_error`.

let mocks: MockProviders;
let gateway: RunningGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startGateway({
    config: {
      ...base,
      providers: { ...base.providers, keyless: { type: "openai", apiKey: { env: "KEYLESS_API_KEY" }, optional: true } },
      routes: {
        ...base.routes,
        keyless: { targets: [{ provider: "keyless", model: "gpt-4o" }] },
        three: {
          targets: [
            { provider: "openai", model: "gpt-4o" },
            { provider: "openai", model: "gpt-4o-mini" },
            { provider: "anthropic", model: "claude-sonnet-4-6" },
          ],
        },
        "keyless-then-gpt": { targets: [{ provider: "keyless", model: "gpt-4o" }, { provider: "openai", model: "gpt-4o" }] },
        "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
      },
      store: { path: temporaryLedgerPath() },
    },
    port: 0,
    upstreamTransport: "fetch",
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    log: () => {},
  });
});
afterEach(() => {
  mocks.openai.reset();
  mocks.anthropic.reset();
});
afterAll(async () => {
  await gateway.close();
  mocks.close();
});

// The SDKs as apps use them: default retries (2), no waiting on our side.
const openai = () => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY });
const anthropic = () => new Anthropic({ baseURL: gateway.url, apiKey: APP_KEY });

/** The SDK's error for a call that must fail. */
function failureOf<E>(call: Promise<unknown>): Promise<E> {
  return call.then(
    () => Promise.reject(new Error("the call was expected to fail")),
    (error: unknown) => error as E,
  );
}

async function recordsNow(): Promise<number> {
  await gateway.ledger.flush();
  return (await ledgerRecords(gateway)).length;
}

describe("a failure no retry can fix", () => {
  it("a provider without its key: 503 with x-should-retry false, one call from each SDK, Anthropic's api_error", async () => {
    const before = await recordsNow();
    const fromOpenAI = await failureOf<InstanceType<typeof OpenAI.APIError>>(openai().chat.completions.create({ model: "keyless", messages: [{ role: "user", content: "hi" }] }));
    expect([fromOpenAI.status, fromOpenAI.headers?.get("x-should-retry")]).toEqual([503, "false"]);
    const fromAnthropic = await failureOf<InstanceType<typeof Anthropic.APIError>>(anthropic().messages.create({ model: "keyless", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }));
    expect(fromAnthropic.status).toBe(503);
    expect((fromAnthropic.error as { error: { type: string } }).error.type).toBe("api_error");
    // One request each, not three: one record each.
    expect((await recordsNow()) - before).toBe(2);
  });

  it("a provider that refuses tollgate's key: 502 with x-should-retry false, and the SDK asks once", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 401 }, { kind: "http-error", status: 401 }, { kind: "http-error", status: 401 });
    const failure = await failureOf<InstanceType<typeof OpenAI.APIError>>(openai().chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }));
    expect([failure.status, failure.headers?.get("x-should-retry")]).toEqual([502, "false"]);
    expect(mocks.openai.requests).toHaveLength(1);
  });

  // A model the provider does not know (a typo in the route, a model the account has no access
  // to) is the config's to fix too: the 502 had no x-should-retry, so the SDK asked three times.
  it("a provider that does not know the configured model: 502 with x-should-retry false, and the SDK asks once", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 404, type: "invalid_request_error", code: "model_not_found", message: "The model `gpt-4o` does not exist or you do not have access to it." });
    const failure = await failureOf<InstanceType<typeof OpenAI.APIError>>(openai().chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }] }));
    expect([failure.status, failure.headers?.get("x-should-retry")]).toEqual([502, "false"]);
    expect(failure.message).toContain('provider "openai" does not know the configured model');
    expect(mocks.openai.requests).toHaveLength(1);
  });

  it("is not claimed when another target failed in a way that may pass: the SDK may retry", async () => {
    // Claude is overloaded (may pass), then OpenAI refuses the key (the failure the client is told of).
    mocks.anthropic.enqueue({ kind: "http-error", status: 529 });
    mocks.openai.enqueue({ kind: "http-error", status: 401 });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-then-gpt", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = (await response.json()) as { error: { message: string } };
    // The client is told of the failure a retry may get past (route-chat.ts, Failures.failed),
    // and of the route's other one beside it.
    expect(response.status).toBe(503);
    expect(body.error.message).toMatch(/^provider "anthropic" .*overloaded.* \(the route's other targets: gpt-4o: provider "openai" rejected tollgate's credentials \(HTTP 401\); check OPENAI_API_KEY\)$/);
    expect(response.headers.get("x-should-retry")).toBeNull();
  });
});

describe("the message of a route's failure", () => {
  it("names each other target by its model, once each", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 500 }, { kind: "http-error", status: 500 });
    mocks.anthropic.enqueue({ kind: "http-error", status: 500 });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "three", messages: [{ role: "user", content: "hi" }] }),
    });
    const { error } = (await response.json()) as { error: { message: string } };
    const others = error.message.split("(the route's other targets: ")[1]!.replace(/\)$/, "").split("; ");
    expect(others.map((other) => other.split(":")[0])).toEqual(["gpt-4o", "gpt-4o-mini"]);
  });

  it("names a target that was not tried for want of its key, beside the one that failed", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 500 });
    const failure = await failureOf<InstanceType<typeof OpenAI.APIError>>(
      new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0 }).chat.completions.create({ model: "keyless-then-gpt", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(failure.status).toBe(502);
    expect(failure.message).toContain('(the route\'s other targets: provider "keyless" has no API key: set KEYLESS_API_KEY and restart tollgate)');
    // A 500 may pass on a retry: no claim otherwise.
    expect(failure.headers?.get("x-should-retry")).toBeNull();
  });
});
