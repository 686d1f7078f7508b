import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_KEY, APP_KEY, LIMITED_KEY, ledgerRecords, postJson, useMockedGateway } from "./support/gateway.ts";

// POST /v1/messages/count_tokens through tollgate, called as apps call it: the Anthropic SDK's
// messages.countTokens(). An Anthropic target counts with its own endpoint (the msw stand-in);
// other targets are counted with tollgate's tokenizer and flagged. Counting spends nothing.

const rig = useMockedGateway({
  // Budget of a millionth of a dollar: one chat request would be refused, a count must not be.
  "tiny-claude": { targets: [{ provider: "anthropic", model: "claude-haiku-4-5" }], budget: { usd: 0.000001, window: "day" } },
  "claude-then-gpt": {
    targets: [
      { provider: "anthropic", model: "claude-sonnet-4-6" },
      { provider: "openai", model: "gpt-4o" },
    ],
  },
  "cached-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto" } } },
});

const lastCountBody = () => rig.mocks.anthropic.requests.filter((request) => request.url.endsWith("/v1/messages/count_tokens")).at(-1)?.body;
const inputTokens = async (response: Response) => {
  expect(response.status).toBe(200);
  return ((await response.json()) as { input_tokens: number }).input_tokens;
};

const weatherTool = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };

describe("count_tokens with the Anthropic SDK", () => {
  it("asks an Anthropic target's own count_tokens, with the target's model, the provider's key and only the prompt's fields", async () => {
    const { data, response } = await rig.gateway.anthropic.messages
      .countTokens({
        model: "claude",
        system: "You are terse.",
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        tools: [weatherTool],
        tool_choice: { type: "auto" },
      })
      .withResponse();
    // The stand-in's count: 3 words of system + 6 of the message + 1 per tool.
    expect(data).toEqual({ input_tokens: 10 });
    expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");
    expect(response.headers.get("x-tollgate-model")).toBe("claude-sonnet-4-6");
    expect(response.headers.get("x-tollgate-estimated")).toBeNull();
    expect(response.headers.get("x-tollgate-request-id")).toMatch(/^req_/);

    const [upstream] = rig.mocks.anthropic.requests;
    expect(new URL(upstream!.url).pathname).toBe("/v1/messages/count_tokens");
    expect(upstream!.headers["x-api-key"] ?? upstream!.headers.authorization).toContain(ANTHROPIC_KEY);
    expect(JSON.stringify(upstream!.headers)).not.toContain(APP_KEY);
    expect(upstream!.body).toEqual({
      model: "claude-sonnet-4-6",
      system: [{ type: "text", text: "You are terse." }],
      messages: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] }],
      tools: [weatherTool],
      tool_choice: { type: "auto" },
    });
  });

  it("counts with the tokenizer for an OpenAI target, says it is an estimate, and calls nobody", async () => {
    const { data, response } = await rig.gateway.anthropic.messages.countTokens({ model: "gpt", messages: [{ role: "user", content: "Hello there" }] }).withResponse();
    // o200k_base: "Hello", " there" = 2 tokens, + 3 for the message + 3 priming the reply.
    expect(data).toEqual({ input_tokens: 8 });
    expect(response.headers.get("x-tollgate-estimated")).toBe("true");
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("spends nothing: no reservation on a budget too small for one request, and no cost record", async () => {
    const refusedChat = await postJson(rig.gateway, "/v1/messages", { model: "tiny-claude", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(refusedChat.status).toBe(402);
    const before = (await ledgerRecords(rig.gateway)).length;

    const counted = await rig.gateway.anthropic.messages.countTokens({ model: "tiny-claude", messages: [{ role: "user", content: "hi" }] });
    expect(counted).toEqual({ input_tokens: 1 });
    await rig.gateway.ledger.flush();
    expect(await ledgerRecords(rig.gateway)).toHaveLength(before);
    const budgets = (await (await fetch(`${rig.gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } })).json()) as {
      scopes: { scope: string; spentUsd: number; reservedUsd: number }[];
    };
    expect(budgets.scopes.find((scope) => scope.scope === "route:tiny-claude")).toMatchObject({ spentUsd: 0, reservedUsd: 0 });
  });

  it("passes a provider's 429 on in Anthropic's shape, with its retry-after", async () => {
    rig.mocks.anthropic.enqueueCountTokens({ kind: "http-error", status: 429, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", retryAfter: 7 });
    const error = await rig.gateway.anthropic.messages.countTokens({ model: "claude", messages: [{ role: "user", content: "hi" }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).headers?.get("retry-after")).toBe("7");
  });
});

describe("count_tokens counts what a chat request would send, where it would send it", () => {
  const count = (body: unknown) => postJson(rig.gateway, "/v1/messages/count_tokens", body);

  it("counts a client's JSON schema as the line the chat writes into Claude's system prompt", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    await inputTokens(await count({ model: "claude", messages: [{ role: "user", content: "Which city?" }], output_config: { format: { type: "json_schema", schema } } }));
    expect(lastCountBody().system).toEqual([{ type: "text", text: `Respond with a single JSON object that conforms to this JSON Schema, and nothing else: ${JSON.stringify(schema)}` }]);
  });

  it("refuses a blank last user turn as the chat does, without calling Anthropic", async () => {
    const response = await count({ model: "claude", messages: [{ role: "user", content: "   " }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/only whitespace/) });
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("moves on to the route's next target when the first refuses the request, as the chat does", async () => {
    const response = await count({ model: "claude-then-gpt", messages: [{ role: "user", content: "   " }] });
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect(response.headers.get("x-tollgate-estimated")).toBe("true");
    // o200k_base: "   " is 1 token, + 3 for the message + 3 priming the reply.
    expect(await inputTokens(response)).toBe(7);
  });

  it("moves on to the route's next target when the first is overloaded", async () => {
    rig.mocks.anthropic.enqueueCountTokens({ kind: "http-error", status: 529 });
    const response = await count({ model: "claude-then-gpt", messages: [{ role: "user", content: "Hello there" }] });
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect(await inputTokens(response)).toBe(8);
    expect(rig.mocks.anthropic.requests).toHaveLength(1);
  });

  it("estimates an image at 765 tokens where the target cannot count (gpt-4o's price of a 1024 × 1024 image at high detail)", async () => {
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    const withImage = await inputTokens(await count({ model: "gpt", messages: [{ role: "user", content: [image, { type: "text", text: "what is this" }] }] }));
    const without = await inputTokens(await count({ model: "gpt", messages: [{ role: "user", content: [{ type: "text", text: "what is this" }] }] }));
    expect(withImage - without).toBe(765);
  });

  it("counts no prompt-cache sighting: a chat after two counts of its conversation is still its first sighting", async () => {
    const conversation = [
      { role: "user", content: "Summarize this support ticket. " + "The details of the ticket follow in full. ".repeat(300) },
    ];
    await inputTokens(await count({ model: "cached-claude", system: "You are a helpful assistant. ".repeat(10), messages: conversation }));
    await inputTokens(await count({ model: "cached-claude", system: "You are a helpful assistant. ".repeat(10), messages: conversation }));
    const chat = await postJson(rig.gateway, "/v1/messages", { model: "cached-claude", max_tokens: 16, system: "You are a helpful assistant. ".repeat(10), messages: conversation });
    expect(chat.status).toBe(200);
    await chat.text();
    expect(chat.headers.get("x-tollgate-policies")).toContain("prompt_cache=first-sighting");
  });
});

describe("count_tokens refusals, in Anthropic's error shape", () => {
  const count = (body: unknown, key = APP_KEY) => postJson(rig.gateway, "/v1/messages/count_tokens", body, key);

  it.each([
    ["an unknown route", APP_KEY, { model: "nope", messages: [{ role: "user", content: "hi" }] }, 404, "not_found_error", /unknown route "nope"/],
    ["a route the key may not use", LIMITED_KEY, { model: "claude", messages: [{ role: "user", content: "hi" }] }, 403, "permission_error", /may not use route "claude"/],
    ["no messages", APP_KEY, { model: "claude" }, 400, "invalid_request_error", /messages/],
    ["a bad key", "tg_wrong_key", { model: "claude", messages: [{ role: "user", content: "hi" }] }, 401, "authentication_error", /invalid API key/],
  ])("%s", async (_, key, body, status, type, message) => {
    const response = await count(body, key);
    expect(response.status).toBe(status);
    const error = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(error).toMatchObject({ type: "error", error: { type } });
    expect(error.error.message).toMatch(message);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("GET is a 405 that names POST", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/messages/count_tokens`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });
});
