import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";
import { pieceLogprobs } from "./support/msw/openai-wire-format.ts";

// `logprobs: true` (with `top_logprobs` alternatives, 0–20) asks for each output token's log
// probability: apps classify with them ("Yes" at −0.01 vs "No" at −4.6) and read
// `choices[0].logprobs.content[i].top_logprobs`. Was: accepted and ignored, so the app got
// `logprobs: null`, which on the real API means "you did not ask", and its code threw a TypeError.
// OpenAI-shaped targets give them (OpenAI, vLLM, llama-server: local-decoder.e2e.test.ts); Claude
// gives none, so a Claude target refuses such a request and the route moves on.

const rig = useMockedGateway({
  "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
  "o3-then-gpt": { targets: [{ provider: "openai", model: "o3" }, { provider: "openai", model: "gpt-4o" }] },
  "cached-gpt": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { responseCache: { ttlSeconds: 60 } } },
});
const pieces = ["Yes", ",", " it", " is", "."];
const question = [{ role: "user" as const, content: "Is this spam? Answer Yes or No." }];

describe("logprobs", () => {
  it("are asked of OpenAI and come back in the answer, top_logprobs alternatives included", async () => {
    rig.mocks.openai.enqueue({ kind: "text", chunks: pieces });
    const completion = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: question, logprobs: true, top_logprobs: 2 });
    expect(rig.mocks.openai.requests.at(-1)!.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(completion.choices[0]!.logprobs).toEqual({ content: pieceLogprobs(pieces, 2), refusal: null });
    expect(completion.choices[0]!.logprobs!.content![0]!.top_logprobs.map((alternative) => alternative.token)).toEqual(["Yes", "alt0"]);
  });

  it("come streamed with the text they belong to, chunk by chunk", async () => {
    rig.mocks.openai.enqueue({ kind: "text", chunks: pieces });
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: question, logprobs: true, top_logprobs: 1, stream: true });
    const seen: { text: string; tokens: string[] }[] = [];
    let all: unknown[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice?.delta.content) continue;
      const content = choice.logprobs?.content ?? [];
      seen.push({ text: choice.delta.content, tokens: content.map((entry) => entry.token) });
      all = [...all, ...content];
    }
    expect(seen).toEqual(pieces.map((piece) => ({ text: piece, tokens: [piece] })));
    expect(all).toEqual(pieceLogprobs(pieces, 1));
  });

  it("are neither asked for nor invented when the client does not ask", async () => {
    const completion = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: question });
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("logprobs");
    expect(completion.choices[0]!.logprobs).toBeNull();
  });

  it("come back from the response cache as they were first given, streamed or not", async () => {
    rig.mocks.openai.enqueue({ kind: "text", chunks: pieces });
    const ask = { model: "cached-gpt", messages: question, logprobs: true, top_logprobs: 2, temperature: 0 };
    const first = await rig.gateway.openai.chat.completions.create(ask);
    const again = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    expect(again.response.headers.get("x-tollgate-cache")).toBe("hit");
    expect(again.data.choices[0]!.logprobs).toEqual(first.choices[0]!.logprobs);
    const streamed = await rig.gateway.openai.chat.completions.create({ ...ask, stream: true });
    let all: unknown[] = [];
    for await (const chunk of streamed) all = [...all, ...(chunk.choices[0]?.logprobs?.content ?? [])];
    expect(all).toEqual(pieceLogprobs(pieces, 2));
    expect(rig.mocks.openai.requests).toHaveLength(1);
  });

  it("make a route pass over Claude, which gives none, to its OpenAI target", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", messages: question, logprobs: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect((await response.json()).choices[0].logprobs.content.length).toBeGreaterThan(0);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("make a route pass over an OpenAI reasoning model, which refuses them, to its chat model", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "o3-then-gpt", messages: question, logprobs: true });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.map((request) => request.body.model)).toEqual(["gpt-4o"]);
    expect((await response.json()).choices[0].logprobs.content.length).toBeGreaterThan(0);
  });

  it("on a route with only Claude, are a 400 naming logprobs and what to do, before Claude is called", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: question, logprobs: true });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: "logprobs" });
    expect(body.error.message).toBe("logprobs: claude-sonnet-4-6 (Claude) gives no log probabilities: remove logprobs, or route this request to a model that gives them");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it.each([
    [{ top_logprobs: 2 }, "top_logprobs: set logprobs to true as well"],
    [{ logprobs: true, top_logprobs: 21 }, "top_logprobs: at most 20"],
  ])("%j is a 400 naming top_logprobs", async (fields, message) => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: question, ...fields });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ param: "top_logprobs" });
    expect(body.error.message).toContain(message);
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });
});
