import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Anthropic's structured outputs, `output_config.format: {"type": "json_schema", "schema": …}`
// (what the SDK's messages.parse() sends): the answer must be JSON conforming to the schema. It is
// the neutral model's json-schema response format: OpenAI-shaped targets get it as response_format,
// Anthropic targets as the format policy's first system line, with the schema written out.
// Was: the field was dropped without a word, and the answer was unconstrained.

const rig = useMockedGateway();
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const ask = (model: string) =>
  postJson(rig.gateway, "/v1/messages", { model, max_tokens: 100, messages: [{ role: "user", content: "Which city?" }], output_config: { format: { type: "json_schema", schema } } });

describe("an Anthropic client's output_config.format", () => {
  it("reaches an OpenAI model as response_format json_schema", async () => {
    expect((await ask("gpt")).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema } });
  });

  it("reaches an Anthropic model as the schema, first in the system prompt", async () => {
    expect((await ask("claude")).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.system).toEqual([
      { type: "text", text: `Respond with a single JSON object that conforms to this JSON Schema, and nothing else: ${JSON.stringify(schema)}` },
    ]);
  });
});
