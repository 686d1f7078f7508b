import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// A client's response_format json_schema on a route with its own format instruction. OpenAI takes
// the schema natively; Anthropic has no response_format, so the schema is written into the first
// line of the system prompt, and the route's instruction follows it. Was: the route's instruction
// replaced the schema's line, so Anthropic got neither the schema nor the demand for JSON.

const INSTRUCTION = "Keep every JSON value short.";
const rig = useMockedGateway({
  "json-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { format: { type: "json", instruction: INSTRUCTION } } },
  "json-gpt": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { format: { type: "json", instruction: INSTRUCTION } } },
});

const schema = { type: "object", properties: { favouriteColour: { type: "string" } }, required: ["favouriteColour"] };
const ask = (model: string) =>
  postJson(rig.gateway, "/v1/chat/completions", {
    model,
    messages: [{ role: "user", content: "Pick a colour" }],
    response_format: { type: "json_schema", json_schema: { name: "pick", schema } },
  });

describe("a client's JSON schema on a route with its own format instruction", () => {
  it("Anthropic gets the schema first, then the route's instruction", async () => {
    expect((await ask("json-claude")).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.system).toEqual([
      { type: "text", text: `Respond with a single JSON object that conforms to this JSON Schema, and nothing else: ${JSON.stringify(schema)}\n${INSTRUCTION}` },
    ]);
  });

  it("OpenAI gets the schema natively, named in the first line, then the route's instruction", async () => {
    expect((await ask("json-gpt")).status).toBe(200);
    const sent = rig.mocks.openai.requests.at(-1)!.body;
    expect(sent.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "pick", schema } });
    expect(sent.messages[0]).toEqual({ role: "system", content: `Respond with a single JSON object that conforms to the JSON Schema "pick", and nothing else.\n${INSTRUCTION}` });
  });
});

describe("a client's JSON schema with a description, on a route with its own format instruction", () => {
  it("Anthropic reads the description with the schema it is written out with", async () => {
    const described = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "json-claude",
      messages: [{ role: "user", content: "Pick a colour" }],
      response_format: { type: "json_schema", json_schema: { name: "pick", description: "for a paint shop's form", schema } },
    });
    expect(described.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.system).toEqual([
      { type: "text", text: `Respond with a single JSON object that conforms to this JSON Schema (for a paint shop's form), and nothing else: ${JSON.stringify(schema)}\n${INSTRUCTION}` },
    ]);
  });
});

// Claude with structured outputs decodes to the schema itself (output_config.format), which has no
// place for a description, and the first line only named the schema: the description reached
// Claude nowhere (found by review). The named line now carries it.
describe("a client's JSON schema with a description, to Claude with structured outputs", () => {
  it("reaches Claude in the line that names the schema", async () => {
    const closed = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "Which city?" }],
      response_format: { type: "json_schema", json_schema: { name: "answer", description: "the capital of France, in French", schema: closed, strict: true } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-policies")).toContain("format=native");
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.system).toEqual([{ type: "text", text: 'Respond with a single JSON object that conforms to the JSON Schema "answer" (the capital of France, in French), and nothing else.' }]);
    expect(sent.output_config).toMatchObject({ format: { type: "json_schema" } });
  });
});
