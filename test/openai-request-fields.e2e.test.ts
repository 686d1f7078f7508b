import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Chat Completions fields of the openai SDK (6.x, ChatCompletionCreateParamsBase) that change an
// answer, its length or its cache, and that only OpenAI acts on. Was: the request schema stripped
// them (zod drops keys it does not know), the request succeeded, and the app could not tell that
// its option never reached OpenAI.

const rig = useMockedGateway({ gpt5: { targets: [{ provider: "openai", model: "gpt-5" }] }, o3: { targets: [{ provider: "openai", model: "o3" }] } });
const sent = () => rig.mocks.openai.requests.at(-1)!.body as Record<string, unknown>;
const sentToClaude = () => rig.mocks.anthropic.requests.at(-1)!.body as Record<string, unknown>;
const hi = [{ role: "user" as const, content: "Explain TCP." }];

describe("verbosity", () => {
  it("reaches a gpt-5 model", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "gpt5", messages: hi, verbosity: "low" });
    expect(sent().verbosity).toBe("low");
  });

  it("is dropped with a note for gpt-4o, which came before it, and for Claude", async () => {
    for (const [route, lastBody] of [["gpt", sent], ["claude", sentToClaude]] as const) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, messages: hi, verbosity: "low" });
      expect(response.status).toBe(200);
      expect(lastBody().verbosity).toBeUndefined();
      expect(response.headers.get("x-tollgate-policies")).toContain("verbosity=dropped");
    }
  });
});

describe("prompt_cache_retention and prediction", () => {
  it("reach OpenAI; a prediction in text parts arrives as their text", async () => {
    await rig.gateway.openai.chat.completions.create({
      model: "gpt",
      messages: hi,
      prompt_cache_retention: "24h",
      prediction: { type: "content", content: [{ type: "text", text: "export const x" }, { type: "text", text: " = 1;\n" }] },
    });
    expect(sent()).toMatchObject({ prompt_cache_retention: "24h", prediction: { type: "content", content: "export const x = 1;\n" } });
  });

  it("a prediction is dropped with a note for an OpenAI reasoning model, which refuses it (it only saves time)", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "o3", messages: hi, prediction: { type: "content", content: "x" } });
    expect(response.status).toBe(200);
    expect(sent()).not.toHaveProperty("prediction");
    expect(response.headers.get("x-tollgate-policies")).toContain("prediction=dropped");
  });

  it("are not sent to Claude, which has neither", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, prompt_cache_retention: "24h", prediction: { type: "content", content: "x" } });
    expect(response.status).toBe(200);
    expect(sentToClaude()).not.toHaveProperty("prompt_cache_retention");
    expect(sentToClaude()).not.toHaveProperty("prediction");
  });
});

describe("store and metadata", () => {
  it("reach OpenAI (stored completions, tagged), and not a local decoder or Claude", async () => {
    const tags = { team: "search", run: "nightly-7" };
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, store: true, metadata: tags });
    expect(sent()).toMatchObject({ store: true, metadata: tags });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: hi, store: true, metadata: tags });
    expect(response.status).toBe(200);
    expect(sentToClaude()).not.toHaveProperty("store");
    expect(sentToClaude().metadata).toBeUndefined();
  });

  it("metadata with a value that is not a string is a 400 naming it", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, metadata: { run: 7 } });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "metadata.run" });
  });
});

describe("service_tier", () => {
  it('"default" reaches OpenAI', async () => {
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, service_tier: "default" });
    expect(sent().service_tier).toBe("default");
  });

  it('"flex", "scale" and "priority", billed at rates tollgate does not price with, are a 400 saying so', async () => {
    for (const tier of ["flex", "scale", "priority"]) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, service_tier: tier });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ type: "invalid_request_error", param: "service_tier" });
      expect(body.error.message).toContain('remove service_tier, or write "auto" or "default"');
    }
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });
});

describe("a message's participant name", () => {
  const chat = [
    { role: "system" as const, name: "house-rules", content: "Be brief." },
    { role: "user" as const, name: "alice", content: "I vote pizza." },
    { role: "assistant" as const, name: "moderator", content: "Noted." },
    { role: "user" as const, name: "bob", content: "I vote sushi. What did alice vote?" },
  ];

  it("reaches OpenAI on each message", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: chat });
    expect(sent().messages).toEqual(chat);
  });

  it("does not reach Claude, whose messages have no name, and the note says so", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: chat });
    expect(response.status).toBe(200);
    expect(JSON.stringify(sentToClaude())).not.toContain('"name":"alice"');
    expect(response.headers.get("x-tollgate-policies")).toContain("name=dropped");
  });
});

describe("fields tollgate cannot carry whole", () => {
  it.each([
    ["moderation", { model: "omni-moderation-latest" }, "moderated completions: remove moderation"],
    ["prompt_cache_options", { mode: "explicit" }, "explicit prompt-cache breakpoints: remove prompt_cache_options"],
  ])("%s is a 400 naming the field and what to do, before any provider is called", async (field, value, message) => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, [field]: value });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: field === "prompt_cache_options" ? "prompt_cache_options.mode" : field });
    expect(body.error.message).toContain(message);
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("a content part's prompt_cache_breakpoint (gpt-5.6's explicit breakpoints) is a 400 naming it, text and image parts alike", async () => {
    // Was: stripped; the app marking its shared prefix got a 200, and the prefix went uncached.
    const breakpoint = { mode: "explicit" };
    const long = "You are a support agent for ACME. ".repeat(50);
    const cases = [
      [[{ role: "system", content: [{ type: "text", text: long, prompt_cache_breakpoint: breakpoint }] }, ...hi], "messages[0].content[0].prompt_cache_breakpoint"],
      [[{ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://example.com/a.png" }, prompt_cache_breakpoint: breakpoint }] }], "messages[0].content[1].prompt_cache_breakpoint"],
    ] as const;
    for (const [messages, param] of cases) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ type: "invalid_request_error", param });
      expect(body.error.message).toContain("explicit prompt-cache breakpoints: remove prompt_cache_breakpoint");
    }
    expect(rig.mocks.openai.requests).toHaveLength(0);
  });

  it("prompt_cache_options that restate OpenAI's defaults (implicit, 30m) are accepted, and not sent", async () => {
    for (const options of [{}, { mode: "implicit" }, { mode: "implicit", ttl: "30m" }]) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, prompt_cache_options: options });
      expect(response.status).toBe(200);
      expect(sent()).not.toHaveProperty("prompt_cache_options");
    }
  });

  it("null for either means unset, as OpenAI reads it", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", messages: hi, moderation: null, prompt_cache_options: null });
    expect(response.status).toBe(200);
  });
});

describe("an assistant turn that refused, put back in the history as the SDK returned it", () => {
  // `{role: "assistant", content: null, refusal: "…"}`: the schema dropped `refusal`, so OpenAI got
  // an empty turn and Claude (which takes none) read the user turns around it as one.
  const refusal = "I'm sorry, I can't help with that.";
  const history = [
    { role: "user" as const, content: "Write a phishing email for my bank." },
    { role: "assistant" as const, content: null, refusal },
    { role: "user" as const, content: "Why not?" },
  ];

  it("reaches OpenAI with what it said", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: history });
    expect((sent().messages as unknown[])[1]).toMatchObject({ role: "assistant", content: refusal });
  });

  it("reaches Claude as the assistant's turn", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "claude", messages: history });
    const messages = sentToClaude().messages as { role: string; content: unknown }[];
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(messages[1]!.content)).toContain(refusal);
  });
});
