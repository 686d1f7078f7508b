import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// What Anthropic refuses in content that OpenAI takes, made right (or refused by tollgate with a
// message saying what to send) before it reaches Claude:
// - `image/jpg`, a common label of an inline image, where Anthropic's media_type takes only
//   image/jpeg, image/png, image/gif or image/webp (its 400: "Input should be 'image/jpeg', …");
// - tool-call arguments that are JSON but not an object (`null`, `[1,2]`, `"x"`), where
//   Anthropic's tool_use.input must be one (its 400: "Input should be a valid dictionary"), and
//   its SDK types it so in answers too.

const rig = useMockedGateway({ "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] } });
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const sentToClaude = () => rig.mocks.anthropic.requests.at(-1)!.body as { messages: { content: { type: string; input?: unknown; source?: { media_type: string } }[] }[] };
const withImage = (mediaType: string) => [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:${mediaType};base64,${PNG}` } }] }];

describe("an inline image for Claude", () => {
  it("labelled image/jpg reaches Claude as image/jpeg", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: withImage("image/jpg") });
    expect(response.status).toBe(200);
    expect(sentToClaude().messages[0]!.content[1]!.source!.media_type).toBe("image/jpeg");
  });

  it("of a type Claude does not take is a 400 naming the message, or goes to the route's next target", async () => {
    const calls = rig.mocks.anthropic.requests.length;
    const refused = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: withImage("image/bmp") });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({ param: "messages[0]", message: expect.stringContaining("send it as image/jpeg, image/png, image/gif, image/webp") });
    expect(rig.mocks.anthropic.requests.length).toBe(calls);

    const moved = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", messages: withImage("image/bmp") });
    expect(moved.status).toBe(200);
    expect(moved.headers.get("x-tollgate-provider")).toBe("openai");
  });
});

describe("tool-call arguments that are JSON but not an object", () => {
  it.each([
    ["null", {}],
    ["[1,2]", { _raw: "[1,2]" }],
    ['"x"', { _raw: '"x"' }],
    ["42", { _raw: "42" }],
  ])("%s reach Claude as an object input", async (args, input) => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: args } }] },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ],
    });
    expect(response.status).toBe(200);
    expect(sentToClaude().messages[1]!.content[0]!.input).toEqual(input);
  });

  it("from an OpenAI model come back to an Anthropic client as an object input", async () => {
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ id: "call_a", name: "f", arguments: "[]" }] });
    const message = await rig.gateway.anthropic.messages.create({ model: "gpt", max_tokens: 50, messages: [{ role: "user", content: "go" }], tools: [{ name: "f", input_schema: { type: "object" } }] });
    expect(message.content.find((block) => block.type === "tool_use")).toMatchObject({ input: { _raw: "[]" } });
  });

  // Streamed, the SDK parses the input_json_delta pieces as they come. Passed through, `[1,2]`
  // became an array input and text that is not JSON threw "Unable to parse tool parameter JSON".
  // So did arguments that open as an object and stop being JSON part-way: a small local model's
  // Python dict, two parallel calls' arguments run together (Gemini's OpenAI endpoint and local
  // models do both) threw "Unexpected non-whitespace character after JSON" where the same answer
  // not streamed read fine. The mock streams arguments in pieces of 4 characters.
  it.each([
    ["[1,2]", { _raw: "[1,2]" }],
    ["not json", { _raw: "not json" }],
    ["null", {}],
    [' {"city":"Paris"}', { city: "Paris" }],
    ["{}", {}],
    ['{"a":{"b":[1,"}"]},"c":true}', { a: { b: [1, "}"] }, c: true }],
    ["{'city': 'Paris'}", { _raw: "{'city': 'Paris'}" }],
    ['{"city":"Paris"}{"city":"Rome"}', { city: "Paris" }],
    ['{"city": "Paris", "warm": True}', { city: "Paris" }],
  ])("%s streamed from an OpenAI model reach an Anthropic client as the same object input", async (args, input) => {
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ id: "call_a", name: "f", arguments: args }] });
    const stream = rig.gateway.anthropic.messages.stream({ model: "gpt", max_tokens: 50, messages: [{ role: "user", content: "go" }], tools: [{ name: "f", input_schema: { type: "object" } }] });
    const message = await stream.finalMessage();
    const toolUse = message.content.find((block) => block.type === "tool_use");
    expect(toolUse?.type === "tool_use" && toolUse.input).toEqual(input);
  });
});

describe("a tool result of captions and screenshots", () => {
  // A computer-use or browser tool returns [caption, screenshot, caption, screenshot]. Was: all
  // text joined first, then every image, so each caption reached Claude apart from its image.
  it("reaches Claude in the client's order", async () => {
    const content = [
      { type: "text", text: "Before clicking:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "text", text: "After clicking:" },
      { type: "image", source: { type: "url", url: "https://example.com/after.png" } },
    ];
    const response = await postJson(rig.gateway, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      messages: [
        { role: "user", content: "click the button" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "browser", input: { action: "click" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] },
      ],
    });
    expect(response.status).toBe(200);
    const result = (rig.mocks.anthropic.requests.at(-1)!.body as { messages: { content: { content: unknown }[] }[] }).messages[2]!.content[0]!.content;
    expect(result).toEqual(content);
  });
});

describe("tool-call ids from other models", () => {
  // Anthropic takes tool_use ids matching ^[a-zA-Z0-9_-]+$ only. Kimi K2 (served by vLLM) names
  // its calls `functions.get_weather:0`: a conversation with such calls that a route sends to
  // Claude got Anthropic's 400 "tool_use.id: String should match pattern".
  it("reach Claude in the form it takes, each call still paired with its result, and distinct ids kept distinct", async () => {
    const ids = ["functions.get_weather:0", "functions.get_weather.0"];
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "get_weather", arguments: "{}" } })) },
        ...ids.map((id) => ({ role: "tool", tool_call_id: id, content: "sunny" })),
      ],
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body as { messages: { content: { type: string; id?: string; tool_use_id?: string }[] }[] };
    const uses = sent.messages[1]!.content.map((block) => block.id!);
    const results = sent.messages[2]!.content.map((block) => block.tool_use_id!);
    for (const id of [...uses, ...results]) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(results).toEqual(uses);
    expect(new Set(uses).size).toBe(2);
  });
});

describe("an Anthropic client's block in a turn that cannot hold it", () => {
  // Anthropic answers such a request with a 400. Was: the block was dropped, and the conversation
  // went on without it in silence (a tool call in a user turn, an image in an assistant turn).
  it.each([
    ["a tool_use block in a user turn", [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "tool_use", id: "toolu_1", name: "f", input: {} }] }], "messages[0].content[1]"],
    [
      "an image in an assistant turn",
      [{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "text", text: "look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] }, { role: "user", content: "ok" }],
      "messages[1].content[1]",
    ],
  ])("%s is a 400 naming it", async (_what, messages, param) => {
    const calls = rig.mocks.anthropic.requests.length;
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 10, messages });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(param);
    expect(rig.mocks.anthropic.requests.length).toBe(calls);
  });
});
