import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, APP_KEY, LIMITED_KEY, testConfig, useMockedGateway } from "./support/gateway.ts";
import { startGateway } from "../src/node/serve.ts";

// Every error a client can meet, in its own dialect, with the status of the brief.

const rig = useMockedGateway();

function post(path: string, body: string, headers: Record<string, string> = { authorization: `Bearer ${APP_KEY}` }) {
  return fetch(`${rig.gateway.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

describe("the request id", () => {
  it("is on every answer: chat, models, budgets, health, and an unknown path", async () => {
    const auth = { authorization: `Bearer ${APP_KEY}` };
    const responses = [
      await post("/v1/chat/completions", JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "hi" }] })),
      await fetch(`${rig.gateway.url}/v1/models`, { headers: auth }),
      await fetch(`${rig.gateway.url}/v1/budgets`, { headers: auth }),
      await fetch(`${rig.gateway.url}/healthz`),
      await fetch(`${rig.gateway.url}/nowhere`),
    ];
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 404]);
    const ids = responses.map((response) => response.headers.get("x-tollgate-request-id"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(responses.map((response) => response.headers.get("content-type"))).toEqual(Array(5).fill("application/json"));
  });
});

describe("errors in the OpenAI dialect", () => {
  it.each([
    ["a bad key", 401, { authorization: "Bearer tg_wrong" }, { model: "gpt", messages: [{ role: "user", content: "x" }] }, "authentication_error", "invalid API key"],
    ["an unknown route", 404, undefined, { model: "gtp", messages: [{ role: "user", content: "x" }] }, "invalid_request_error", 'unknown route "gtp": set model to one of gpt, claude, gpt-then-claude'],
    ["a wrong type", 400, undefined, { model: "gpt", messages: [{ role: "user", content: "x" }], temperature: "warm" }, "invalid_request_error", "temperature: "],
    ["a route the key may not use", 403, { authorization: `Bearer ${LIMITED_KEY}` }, { model: "claude", messages: [{ role: "user", content: "x" }] }, "permission_error", 'this key may not use route "claude"; it may use: gpt'],
  ])("answers %s with %i", async (_what, status, headers, body, type, message) => {
    const response = await post("/v1/chat/completions", JSON.stringify(body), headers);
    expect(response.status).toBe(status);
    expect(response.headers.get("x-tollgate-request-id")).toMatch(/^req_/);
    const payload = await response.json();
    expect(payload.error.type).toBe(type);
    expect(payload.error.message).toContain(message);
    expect(Object.keys(payload.error).sort()).toEqual(["code", "message", "param", "type"]);
  });

  it("answers invalid JSON with 400 and the parser's reason", async () => {
    const response = await post("/v1/chat/completions", '{"model": "gpt",');
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/^the request body is not valid JSON/);
  });

  it("names the field in `param` so SDK users see it", async () => {
    const failure = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "x" }], max_tokens: -5 }).catch((error) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure.param).toBe("max_tokens");
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("answers a body over the limit with 413 before reading it", async () => {
    const response = await post("/v1/chat/completions", JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "x".repeat(70 * 1024) }] }));
    expect(response.status).toBe(413);
    expect((await response.json()).error.message).toContain("raise server.maxBodyBytes");
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("when every target of a route rate-limits, gives the retry-after that lifts first", async () => {
    // Was: the last target's, though the first would take a request again sooner.
    rig.mocks.openai.enqueue({ kind: "http-error", status: 429, retryAfter: 5 });
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429, retryAfter: 30 });
    const failure = await rig.gateway.openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(failure.headers.get("retry-after")).toBe("5");
  });

  it("when one target rate-limits and the next fails for good, gives the rate limit and its retry-after", async () => {
    // Was: the last target's 502 (a model it does not have), with no retry-after, though a retry
    // after 7 s can be answered by the first target.
    rig.mocks.openai.enqueue({ kind: "http-error", status: 429, retryAfter: 7 });
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 404, type: "not_found_error", message: "model: claude-sonnet-4-6" });
    const failure = await rig.gateway.openai.chat.completions.create({ model: "gpt-then-claude", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(failure.headers.get("retry-after")).toBe("7");
    expect(failure.message).toContain("the route's other targets: claude-sonnet-4-6:");
    expect(failure.type).toBe("tokens");
  });

  it("passes a provider's 429 through with its retry-after", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 429, retryAfter: 12 });
    const failure = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(failure.headers.get("retry-after")).toBe("12");
    expect(failure.code).toBe("rate_limit_exceeded");
    // What OpenAI's 429 said ran out (the stand-in's TPM throttle), kept. Was: "rate_limit_error".
    expect(failure.type).toBe("tokens");
  });

  it("answers OpenAI's Responses API (the Vercel AI SDK's default) with a 404 saying how to use Chat Completions", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" }, body: '{"model":"gpt","input":"hi"}' });
    expect(response.status).toBe(404);
    const { error } = await response.json();
    expect(error.code).toBe("unknown_endpoint");
    expect(error.message).toMatch(/^no such endpoint: POST \/v1\/responses; OpenAI's Responses API is not served: use Chat Completions \(the Vercel AI SDK: openai\.chat\(route\)/);
  });

  it("answers an unknown path with 404 listing the endpoints", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/completions`, { method: "POST", headers: { authorization: `Bearer ${APP_KEY}` }, body: "{}" });
    expect(response.status).toBe(404);
    const { error } = await response.json();
    expect(error.message).toBe(
      "no such endpoint: POST /v1/completions; tollgate serves POST /v1/chat/completions, POST /v1/messages, POST /v1/messages/count_tokens, GET /v1/models, GET /v1/models/{route}, GET /v1/budgets, GET /v1/admin/costs, GET /admin (the cost dashboard), GET /healthz",
    );
    // A path, not a model: not the "model_not_found" an unknown route gets.
    expect(error.code).toBe("unknown_endpoint");
  });
});

describe("errors in the Anthropic dialect", () => {
  it.each([
    ["a bad key", 401, { "x-api-key": "tg_wrong" }, { model: "claude", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, "authentication_error"],
    ["an unknown route", 404, undefined, { model: "nope", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, "not_found_error"],
    ["a missing max_tokens", 400, undefined, { model: "claude", messages: [{ role: "user", content: "x" }] }, "invalid_request_error"],
    ["a route the key may not use", 403, { "x-api-key": LIMITED_KEY }, { model: "claude", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, "permission_error"],
  ])("answers %s with %i", async (_what, status, headers, body, type) => {
    const response = await post("/v1/messages", JSON.stringify(body), headers);
    expect(response.status).toBe(status);
    const payload = await response.json();
    expect(payload.type).toBe("error");
    expect(payload.error.type).toBe(type);
    expect(payload.error.message.length).toBeGreaterThan(10);
  });

  it("answers a body over the limit with 413 request_too_large", async () => {
    const response = await post("/v1/messages", JSON.stringify({ model: "claude", max_tokens: 5, messages: [{ role: "user", content: "y".repeat(70 * 1024) }] }));
    expect(response.status).toBe(413);
    expect((await response.json()).error.type).toBe("request_too_large");
  });

  // Anthropic answers an overloaded model with 529, which its SDK raises as OverloadedError (a
  // 503 was its ServiceUnavailableError); OpenAI clients get a 503 with code "overloaded".
  it("surfaces a provider's 529 overload to the SDK as a retryable 5xx: 529 OverloadedError for Anthropic clients, 503 for OpenAI's", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 529, type: "overloaded_error", message: "Overloaded" });
    const failure = await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 5, messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(Anthropic.OverloadedError);
    expect(failure.status).toBe(529);
    expect(failure.error).toEqual({ type: "error", error: { type: "overloaded_error", message: 'provider "anthropic" is overloaded: Overloaded' }, request_id: failure.requestID });
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 529, type: "overloaded_error", message: "Overloaded" });
    const fromOpenAI = await rig.gateway.openai.chat.completions.create({ model: "claude", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect([fromOpenAI.status, fromOpenAI.error?.code]).toEqual([503, "overloaded"]);
  });
});

describe("provider credentials never reach a client", () => {
  it("turns a provider's 401 (which echoes part of the key) into a 502 that names the variable, not the key", async () => {
    // Its last four characters (which OpenAI echoes) are not hex, so no request id can contain them.
    const wrongKey = "sk-proj-WRONGabcdefghijklmnopQXZW";
    const logged: string[] = [];
    const misconfigured = await startGateway({
      config: testConfig(),
      port: 0,
      env: { OPENAI_API_KEY: wrongKey, ANTHROPIC_API_KEY: "x" },
      log: (line) => logged.push(line),
      upstreamTransport: "fetch",
    });
    try {
      const response = await fetch(`${misconfigured.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${APP_KEY}` },
        body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "x" }] }),
      });
      const text = await response.text();
      expect(response.status).toBe(502);
      expect(JSON.parse(text).error.message).toBe("provider \"openai\" rejected tollgate's credentials (HTTP 401); check OPENAI_API_KEY");
      expect(text).not.toContain("WRONG");
      expect(text).not.toContain("QXZW");
      // The gateway's own log names the failure but not the key either.
      expect(logged.join("\n")).toContain("rejected tollgate's credentials");
      expect(logged.join("\n")).not.toContain("WRONG");
      expect(logged.join("\n")).not.toContain("QXZW");
      // The upstream really did answer with the key echoed; tollgate kept it to itself.
      expect(rig.mocks.openai.requests[0]!.headers.authorization).toBe(`Bearer ${wrongKey}`);
    } finally {
      await misconfigured.close();
    }
  });

  it("answers requests to an optional provider without its key with 503 naming the variable", async () => {
    const config = testConfig();
    (config.providers.openai as Record<string, unknown>).optional = true;
    const partial = await startGateway({ config, port: 0, env: { ANTHROPIC_API_KEY: "x" }, log: () => {}, upstreamTransport: "fetch" });
    try {
      const client = new OpenAI({ baseURL: `${partial.url}/v1`, apiKey: APP_KEY, maxRetries: 0 });
      const failure = await client.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
      expect(failure.status).toBe(503);
      expect(failure.message).toContain('provider "openai" has no API key: set OPENAI_API_KEY and restart tollgate');
      const health = await (await fetch(`${partial.url}/healthz`)).json();
      expect(health).toMatchObject({ status: "ok", providers: { openai: "unavailable", anthropic: "ready" }, ledger: { writes: "ok" } });
    } finally {
      await partial.close();
    }
  });
});

describe("GET /v1/models", () => {
  it("lists the routes a key may use, readable by both SDKs", async () => {
    const all = [];
    for await (const model of rig.gateway.openai.models.list()) all.push(model.id);
    expect(all).toEqual(["gpt", "claude", "gpt-then-claude"]);

    const limited = new Anthropic({ baseURL: rig.gateway.url, apiKey: LIMITED_KEY, maxRetries: 0 });
    const page = await limited.models.list();
    expect(page.data.map((model) => model.id)).toEqual(["gpt"]);

    const admin = new OpenAI({ baseURL: `${rig.gateway.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
    const adminRoutes = [];
    for await (const model of admin.models.list()) adminRoutes.push(model.id);
    expect(adminRoutes).toEqual(["gpt", "claude", "gpt-then-claude"]);
  });

  it("requires a key", async () => {
    expect((await fetch(`${rig.gateway.url}/v1/models`)).status).toBe(401);
  });

  it("pages as Anthropic's list does (limit, after_id, before_id), and the SDK walks every page", async () => {
    // Was: every route on every page, so `limit` and `after_id` were ignored.
    const first = await rig.gateway.anthropic.models.list({ limit: 2 });
    expect([first.data.map((model) => model.id), first.has_more, first.last_id]).toEqual([["gpt", "claude"], true, "claude"]);
    const next = await rig.gateway.anthropic.models.list({ limit: 2, after_id: "claude" });
    expect([next.data.map((model) => model.id), next.has_more]).toEqual([["gpt-then-claude"], false]);
    const before = await rig.gateway.anthropic.models.list({ limit: 1, before_id: "gpt-then-claude" });
    expect([before.data.map((model) => model.id), before.has_more]).toEqual([["claude"], true]);
    const walked = [];
    for await (const model of rig.gateway.anthropic.models.list({ limit: 1 })) walked.push(model.id);
    expect(walked).toEqual(["gpt", "claude", "gpt-then-claude"]);
    const bad = await rig.gateway.anthropic.models.list({ limit: 0 }).catch((error: unknown) => error);
    expect(bad).toMatchObject({ status: 400, message: expect.stringContaining("limit must be a whole number from 1 to 1000") });
  });

  it("gives Anthropic's model fields, null where a route has no value, and the least max_tokens of its targets", async () => {
    // Was: left out, where the SDK types them as required (a number or null): `undefined` in apps.
    const model = await rig.gateway.anthropic.models.retrieve("gpt-then-claude");
    // gpt-4o answers at most 16,384 tokens, claude-sonnet-4-6 64,000.
    expect(model).toMatchObject({ type: "model", max_tokens: 16_384, max_input_tokens: null, capabilities: null, lifecycle: "active", deprecated_at: null, retires_at: null });
  });

  it("answers GET /v1/models/ (no id) with a 404, not a 405 that says it takes GET", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/models/`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    expect(response.status).toBe(404);
  });

  it("refuses a bad key in the dialect of the SDK that asked", async () => {
    const anthropic = new Anthropic({ baseURL: rig.gateway.url, apiKey: "tg_wrong", maxRetries: 0 });
    const anthropicError = await anthropic.models.list().catch((error: unknown) => error);
    expect(anthropicError).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((anthropicError as InstanceType<typeof Anthropic.AuthenticationError>).error).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "invalid API key: use a tollgate virtual key (`npx tollgate keys create` makes one)" },
      request_id: (anthropicError as InstanceType<typeof Anthropic.AuthenticationError>).requestID,
    });

    const openai = new OpenAI({ baseURL: `${rig.gateway.url}/v1`, apiKey: "tg_wrong", maxRetries: 0 });
    const openaiError = await openai.models.list().catch((error: unknown) => error);
    expect(openaiError).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((openaiError as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({ type: "authentication_error", message: "invalid API key: use a tollgate virtual key (`npx tollgate keys create` makes one)" });
  });
});
