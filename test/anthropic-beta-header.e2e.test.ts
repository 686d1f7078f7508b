import { describe, expect, it } from "vitest";
import { APP_KEY, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// The `anthropic-beta` header switches on Messages API features by name. The SDK's `betas`
// parameter (client.beta.messages.*) sends them joined by commas, to `/v1/messages?beta=true`.
// `context-1m-2025-08-07` is what lets Sonnet read a prompt over 200k tokens: without it Anthropic
// answers "prompt is too long". Was: tollgate dropped the header, so such a request failed behind
// the gateway and worked without it.

const rig = useMockedGateway({ "sonnet-45": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }] } });
const BETAS = ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"];
const question = { max_tokens: 50, messages: [{ role: "user" as const, content: "Hello?" }] };

describe("a client's anthropic-beta header", () => {
  it("reaches Anthropic with a message the SDK sends with betas", async () => {
    const message = await rig.gateway.anthropic.beta.messages.create({ model: "claude", ...question, betas: BETAS });
    expect(message.content[0]).toMatchObject({ type: "text" });
    expect(rig.mocks.anthropic.requests.at(-1)!.headers["anthropic-beta"]).toBe(BETAS.join(","));
  });

  it("reaches Anthropic with a streamed message", async () => {
    const stream = rig.gateway.anthropic.beta.messages.stream({ model: "claude", ...question, betas: BETAS });
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("end_turn");
    expect(rig.mocks.anthropic.requests.at(-1)!.headers["anthropic-beta"]).toBe(BETAS.join(","));
  });

  it("reaches Anthropic's count_tokens", async () => {
    const counted = await rig.gateway.anthropic.beta.messages.countTokens({ model: "claude", messages: question.messages, betas: ["context-1m-2025-08-07"] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const sent = rig.mocks.anthropic.requests.at(-1)!;
    expect(sent.url).toContain("/v1/messages/count_tokens");
    // The SDK adds the name count_tokens had as a beta; it goes on as sent.
    expect(sent.headers["anthropic-beta"]!.split(",")).toEqual(["context-1m-2025-08-07", "token-counting-2024-11-01"]);
  });

  it("is sent once per name, without blanks, when a client repeats itself", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "anthropic-version": "2023-06-01", "anthropic-beta": " context-1m-2025-08-07,,context-1m-2025-08-07 ", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", ...question }),
    });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.headers["anthropic-beta"]).toBe("context-1m-2025-08-07");
  });

  it("is not sent to an OpenAI model, which has no such switches", async () => {
    const message = await rig.gateway.anthropic.beta.messages.create({ model: "gpt", ...question, betas: BETAS });
    expect(message.content[0]).toMatchObject({ type: "text" });
    expect(rig.mocks.openai.requests.at(-1)!.headers["anthropic-beta"]).toBeUndefined();
  });

  it("is not invented: a request without it sends none", async () => {
    await rig.gateway.anthropic.messages.create({ model: "claude", ...question });
    expect(rig.mocks.anthropic.requests.at(-1)!.headers["anthropic-beta"]).toBeUndefined();
  });

  it("that is not a list of names is a 400 naming the header, before anything is spent or recorded", async () => {
    const response = await fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "anthropic-version": "2023-06-01", "anthropic-beta": "context 1m", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", ...question }),
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain('anthropic-beta: "context 1m" is not a beta name');
    expect(body.error.message).toContain("separated by commas");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
    await expect(waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!, 300)).rejects.toThrow(/no cost record/);
  });

  // Anthropic's extended-thinking docs: with interleaved thinking and tools, budget_tokens is the
  // whole turn's thinking between tool calls and may exceed max_tokens. Was: refused with a 400.
  describe("interleaved-thinking, with tools", () => {
    const tool = { name: "get_weather", description: "Weather in a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } };
    const thinkingAsk = { model: "sonnet-45", max_tokens: 16_000, thinking: { type: "enabled" as const, budget_tokens: 20_000 }, messages: [{ role: "user" as const, content: "What to wear in Paris and Oslo?" }] };

    it("lets the thinking budget exceed max_tokens, and Claude gets it as sent", async () => {
      const message = await rig.gateway.anthropic.beta.messages.create({ ...thinkingAsk, tools: [tool], betas: ["interleaved-thinking-2025-05-14"] });
      expect(message.type).toBe("message");
      expect(rig.mocks.anthropic.requests.at(-1)!.body.thinking).toEqual({ type: "enabled", budget_tokens: 20_000 });
    });

    it("does not, without the beta or without tools: a budget at or above max_tokens is still a 400", async () => {
      for (const extra of [{ tools: [tool] }, { betas: ["interleaved-thinking-2025-05-14"] }]) {
        await expect(rig.gateway.anthropic.beta.messages.create({ ...thinkingAsk, ...extra })).rejects.toThrow(/thinking\.budget_tokens 20000 must be below max_tokens 16000/);
      }
      expect(rig.mocks.anthropic.requests).toHaveLength(0);
    });
  });
});
