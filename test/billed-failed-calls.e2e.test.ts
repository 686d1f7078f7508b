import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { APP_KEY, ledgerRecords, postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A call the provider had taken before it failed is billed by the provider, so it is billed here:
// Anthropic's stream that sent message_start (which states the input it bills) and then nothing
// until tollgate's deadline cut it. Alone on its route it is the request's record; before a
// fallback it is a record of its own (`attemptOf`), and the request's budget is charged for both.
// Was: $0 either way (the router dropped the preamble's usage, and the meter billed a failed call
// only when the client had left).
//
// Prices (bundled): claude-sonnet-4-6 $3 / $15 per 1M tokens = 3,000 / 15,000 nano-dollars a
// token; gpt-4o $2.50 / $10 = 2,500 / 10,000.

const rig = useMockedGateway(
  {
    "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }], budget: { usd: 1, window: "total" } },
    "capped-claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: 0.05 },
    "capped-haiku-then-sonnet": { targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }, { provider: "anthropic", model: "claude-sonnet-4-6" }], maxCostPerRequestUsd: 0.05 },
    "capped-opus-haiku-mini": {
      targets: [
        { provider: "anthropic", model: "claude-opus-4-1" },
        { provider: "anthropic", model: "claude-haiku-4-5" },
        { provider: "openai", model: "gpt-4o-mini" },
      ],
      maxCostPerRequestUsd: 0.05,
    },
    // o1-pro (priced in config below) cannot keep inference in the US: a request with
    // inference_geo "us" is refused there by a per-target policy (a 400), and the route moves on.
    "capped-o1pro-sonnet-opus": {
      targets: [
        { provider: "openai", model: "o1-pro" },
        { provider: "anthropic", model: "claude-sonnet-4-6" },
        { provider: "anthropic", model: "claude-opus-4-7" },
      ],
      maxCostPerRequestUsd: 0.05,
    },
  },
  [],
  { anthropic: { timeoutMs: 500 }, openai: { pricing: { models: { "o1-pro": { inputPerMillion: 15, outputPerMillion: 600 } } } } },
);

const PROMPT = "one two three four five six seven eight nine ten"; // the mock bills a token a word

describe("a call the provider took, then cut by tollgate's deadline", () => {
  it("alone on its route: the request's record bills the input message_start reported", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 50, stream: true, messages: [{ role: "user", content: PROMPT }] });
    await response.text();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({ status: "error", errorType: "timeout", provider: "anthropic" });
    // 10 input tokens and message_start's placeholder of 1 output token: 30,000 + 15,000.
    expect(record.usage).toMatchObject({ inputTokens: 10, outputTokens: 1 });
    expect(record.cost.totalNano).toBe(45_000);
  });

  it("before a fallback: a record of its own, and the budget charged for both calls", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: PROMPT }] });
    expect(await response.text()).toContain("rescued");
    const id = response.headers.get("x-tollgate-request-id")!;
    const answered = await waitForRecord(rig.gateway, id);
    expect(answered).toMatchObject({ status: "ok", provider: "openai" });
    expect(answered.cost.totalNano).toBe(17_500); // 3 × 2,500 + 1 × 10,000
    const earlier = (await ledgerRecords(rig.gateway)).find((record) => record.requestId === `${id}.1`);
    expect(earlier).toMatchObject({ attemptOf: id, status: "error", errorType: "timeout", provider: "anthropic", model: "claude-sonnet-4-6", route: "claude-then-gpt" });
    expect(earlier!.cost.totalNano).toBe(45_000);

    const budgets = await fetch(`${rig.gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    const { scopes } = (await budgets.json()) as { scopes: { scope: string; spentUsd: number; reservedUsd: number }[] };
    expect(scopes.find((scope) => scope.scope === "route:claude-then-gpt")).toMatchObject({ spentUsd: 0.0000625, reservedUsd: 0 }); // 62,500 nano
  });

  it("a refusal before a fallback (a 529 overloaded) is not billed and has no record of its own", async () => {
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 529, type: "overloaded_error" });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", messages: [{ role: "user", content: PROMPT }] });
    expect(response.status).toBe(200);
    const id = response.headers.get("x-tollgate-request-id")!;
    expect((await waitForRecord(rig.gateway, id)).cost.totalNano).toBe(17_500);
    expect((await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id)).toEqual([]);
  });
});

// A 200 whose stream closes before its first event (a proxy or load balancer that lost the
// provider): nothing says the provider read the prompt, so the call is not billed, as a reset
// before the first event and an empty answer not streamed are not. Was billed the prompt as
// counted, with a record of its own, and charged to the budgets on top of the call that answered.
describe("an empty stream before a fallback", () => {
  it("is not billed and has no record of its own", async () => {
    const empty = () => new HttpResponse(new ReadableStream({ start: (controller) => controller.close() }), { status: 200, headers: { "content-type": "text/event-stream" } });
    rig.mocks.server.use(http.post("https://api.openai.com/v1/chat/completions", empty, { once: true }));
    rig.mocks.anthropic.enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt-then-claude", stream: true, max_tokens: 20, messages: [{ role: "user", content: PROMPT }] });
    expect(await response.text()).toContain("rescued");
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(rig.gateway, id)).toMatchObject({ status: "ok", provider: "anthropic", fallbackFrom: [{ provider: "openai", model: "gpt-4o" }] });
    expect((await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id)).toEqual([]);
  });
});

// The per-request cap bounds the whole request: the billed calls before a fallback plus the
// worst case of the target tried next. Was: checked at admission only, so the fallback ran and the
// request cost more than its cap.
describe("maxCostPerRequestUsd across a fallback", () => {
  const ask = (route: string, maxTokens: number, prompt = PROMPT) =>
    postJson(rig.gateway, "/v1/chat/completions", { model: route, max_tokens: maxTokens, stream: true, messages: [{ role: "user", content: prompt }] });

  /** The largest max_tokens whose worst case fits the cap on every target, as the cap's 400 says. */
  async function fitting(route: string, prompt = PROMPT): Promise<number> {
    const refused = await ask(route, 1_000_000, prompt);
    expect(refused.status).toBe(400);
    return Number(/max_tokens of at most (\d+)/.exec(((await refused.json()) as { error: { message: string } }).error.message)![1]);
  }

  it("stops the route when the billed call and the next target's worst case would pass the cap", async () => {
    // Haiku 4.5 is billed for 100 prompt words and its placeholder token: 100 × 1,000 + 5,000 =
    // 105,000 nano. At the largest fitting max_tokens, Sonnet 4.6's worst case is within one
    // output token (16,500 nano at its US price) of $0.05: the two cannot both fit.
    const prompt = "word ".repeat(100).trim();
    const maxTokens = await fitting("capped-haiku-then-sonnet", prompt);
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    const calls = rig.mocks.anthropic.requests.length;
    const response = await ask("capped-haiku-then-sonnet", maxTokens, prompt);
    expect(response.status).toBe(504);
    await response.text();
    expect(rig.mocks.anthropic.requests.length).toBe(calls + 1); // Sonnet was never called
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({ status: "error", provider: "anthropic", model: "claude-haiku-4-5" });
    expect(record.cost.totalNano).toBe(105_000);
  });

  it("falls back where the next target's worst case leaves room for the billed call, though the failed one's would not", async () => {
    // Sonnet's worst case sets the fitting max_tokens; gpt-4o's at $10 per 1M output is far below
    // it, room enough for Sonnet's billed 45,000 nano.
    const maxTokens = await fitting("capped-claude-then-gpt");
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const response = await ask("capped-claude-then-gpt", maxTokens);
    expect(await response.text()).toContain("rescued");
  });

  it("weighs only the targets still to be tried: not one that refused (a 429) before the billed call", async () => {
    // Opus 4.1 sets the fitting max_tokens, its worst case within one output token (82,500 nano
    // at its US price) of $0.05; it answers 429 (not billed, not tried again). Haiku 4.5 is then
    // billed 105,000 nano (as above), which gpt-4o-mini's worst case leaves room for. Was: Opus's
    // worst case still counted, and the request ended with Haiku's failure.
    const prompt = "word ".repeat(100).trim();
    const maxTokens = await fitting("capped-opus-haiku-mini", prompt);
    rig.mocks.anthropic.enqueue({ kind: "http-error", status: 429 }, { kind: "stall", afterChunks: 0 });
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const response = await ask("capped-opus-haiku-mini", maxTokens, prompt);
    expect(await response.text()).toContain("rescued");
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(rig.gateway, id)).toMatchObject({ status: "ok", provider: "openai", model: "gpt-4o-mini" });
    const earlier = (await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id);
    expect(earlier.map((record) => ({ model: record.model, totalNano: record.cost.totalNano }))).toEqual([{ model: "claude-haiku-4-5", totalNano: 105_000 }]);
  });

  it("weighs no target a per-target policy refused (a 400) before the billed call: the route never calls it", async () => {
    // o1-pro sets the fitting max_tokens (its worst case near $0.05) and is refused for
    // inference_geo "us" (never called). Sonnet 4.6 is then billed for 100 prompt words and its
    // placeholder token at its US price, 100 × 3,300 + 16,500 = 346,500 nano, which Opus 4.7's
    // worst case leaves room for. Was: o1-pro's worst case still counted, and the request ended
    // with Sonnet's failure.
    const prompt = "word ".repeat(100).trim();
    const ask = (maxTokens: number) =>
      postJson(rig.gateway, "/v1/messages", { model: "capped-o1pro-sonnet-opus", max_tokens: maxTokens, inference_geo: "us", stream: true, messages: [{ role: "user", content: prompt }] });
    const refused = await ask(1_000_000);
    expect(refused.status).toBe(400);
    const maxTokens = Number(/max_tokens of at most (\d+)/.exec(((await refused.json()) as { error: { message: string } }).error.message)![1]);
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 }, { kind: "text", text: "rescued" });
    const calls = rig.mocks.anthropic.requests.length;
    const openaiCalls = rig.mocks.openai.requests.length;
    const response = await ask(maxTokens);
    expect(await response.text()).toContain("rescued");
    expect(rig.mocks.openai.requests.length).toBe(openaiCalls);
    expect(rig.mocks.anthropic.requests.slice(calls).map((request) => request.body.model)).toEqual(["claude-sonnet-4-6", "claude-opus-4-7"]);
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(rig.gateway, id)).toMatchObject({ status: "ok", provider: "anthropic", model: "claude-opus-4-7" });
    const earlier = (await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id);
    expect(earlier.map((record) => ({ model: record.model, totalNano: record.cost.totalNano }))).toEqual([{ model: "claude-sonnet-4-6", totalNano: 346_500 }]);
  });
});
