import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Policies that must keep a request acceptable to its target, and a cap that must hold.

const rig = useMockedGateway({
  // An OpenAI chat model the bundled price list does not know (priced in config).
  "turbo-stop": { targets: [{ provider: "openai", model: "gpt-4-turbo" }], policies: { stop: { sequences: ["\n\nUser:"] } } },
  // A JSON route with its own wording for the first line.
  "json-custom": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { format: { type: "json", instruction: "Answer with an object that has the keys name and colour." } } },
  // Only a cap: the most output a client may get on this route.
  "capped-only": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { maxTokens: { cap: 100 } } },
  "capped-only-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { maxTokens: { cap: 100 } } },
});

const chat = (body: object) => postJson(rig.gateway, "/v1/chat/completions", body);

describe("stop: OpenAI takes at most 4 sequences, on every chat model", () => {
  it("trims the merged list for an OpenAI model the price list does not know", async () => {
    // REFERENCE.md: OpenAI `stop`: up to 4 sequences. The client sends 4, the route adds 1, which goes.
    const response = await chat({ model: "turbo-stop", messages: [{ role: "user", content: "hi" }], stop: ["a", "b", "c", "d"] });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.stop).toEqual(["a", "b", "c", "d"]);
    expect(response.headers.get("x-tollgate-policies")).toContain("stop=trimmed:5->4");
  });
});

describe("format: json_object needs the word JSON in the messages", () => {
  it("a custom instruction on a JSON route still leaves the request acceptable to OpenAI", async () => {
    // OpenAI answers json_object without "json" anywhere in the messages with a 400:
    // "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
    const response = await chat({ model: "json-custom", messages: [{ role: "user", content: "Pick a fruit" }] });
    expect(response.status).toBe(200);
    const sent = rig.mocks.openai.requests.at(-1)!.body;
    expect(sent.response_format).toEqual({ type: "json_object" });
    expect(sent.messages[0]).toEqual({
      role: "system",
      content: "Answer with an object that has the keys name and colour.\nRespond with a single JSON object and nothing else.",
    });
  });
});

describe("maxTokens: a route's cap bounds every answer", () => {
  it("a client that sends no max_tokens is held to the cap too (OpenAI target)", async () => {
    const response = await chat({ model: "capped-only", messages: [{ role: "user", content: "write a long story" }] });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.max_completion_tokens).toBe(100);
  });

  it("a client that sends no max_tokens is held to the cap too (Anthropic target: not the adapter's 4096)", async () => {
    const response = await chat({ model: "capped-only-claude", messages: [{ role: "user", content: "write a long story" }] });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.max_tokens).toBe(100);
  });
});
