import { zodOutputFormat } from "@anthropic-ai/sdk/helpers/zod";
import { zodFunction, zodResponseFormat } from "openai/helpers/zod";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// Structured outputs. Anthropic's `output_config.format: {"type": "json_schema", "schema": …}`
// (what the SDK's messages.parse() sends) and OpenAI's strict `response_format` both ask for an
// answer decoded to the schema, and `strict` tools for inputs decoded to theirs. Each provider
// gets them natively where it has them: OpenAI-shaped targets as response_format; Claude models
// with structured outputs (Sonnet 4.5 and later, Haiku 4.5, Opus 4.5 and later:
// platform.claude.com/docs/en/build-with-claude/structured-outputs) as output_config.format and
// `strict`. Older Claude models refuse those fields, so they get the schema written out in the
// system prompt's first line. Was: Claude always got the line, and `strict` was dropped on
// every target, so parse() could fail on an answer the provider would have kept to the schema.

const rig = useMockedGateway({
  "claude-3-5": { targets: [{ provider: "anthropic", model: "claude-3-5-haiku" }] },
  "claude-rejecting": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { sampling: { onUnsupported: "reject" } } },
});
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const ask = (model: string, format: Record<string, unknown> = schema) =>
  postJson(rig.gateway, "/v1/messages", { model, max_tokens: 100, messages: [{ role: "user", content: "Which city?" }], output_config: { format: { type: "json_schema", schema: format } } });
const named = 'Respond with a single JSON object that conforms to the JSON Schema "output", and nothing else.';
const spelledOut = (format: Record<string, unknown>) => `Respond with a single JSON object that conforms to this JSON Schema, and nothing else: ${JSON.stringify(format)}`;

describe("an Anthropic client's output_config.format", () => {
  // Claude decodes to the schema; OpenAI does only in strict mode, which was never asked for, so
  // the schema was a hint there (found by review). Strict where the schema meets OpenAI's rules.
  it("reaches an OpenAI model as response_format json_schema, strict where the schema meets OpenAI's strict rules", async () => {
    expect((await ask("gpt")).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema, strict: true } });
    // An optional property: OpenAI's strict mode would refuse the schema, so it goes as a hint.
    const optional = { type: "object", properties: { city: { type: "string" }, country: { type: "string" } }, required: ["city"], additionalProperties: false };
    expect((await ask("gpt", optional)).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema: optional } });
    // A keyword strict mode refuses ("'default' is not permitted", allOf): a hint too, not a 400.
    for (const city of [{ type: "string", default: "Oslo" }, { allOf: [{ type: "string" }, { enum: ["Oslo", "Rome"] }] }]) {
      const closed = { type: "object", properties: { city }, required: ["city"], additionalProperties: false };
      expect((await ask("gpt", closed)).status).toBe(200);
      expect(rig.mocks.openai.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema: closed } });
    }
  });

  it("reaches a Claude model with structured outputs as output_config.format, the schema named in the first line", async () => {
    const response = await ask("claude");
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toEqual({ format: { type: "json_schema", schema } });
    expect(sent.system).toEqual([{ type: "text", text: named }]);
    expect(response.headers.get("x-tollgate-policies")).toContain("format=native");
  });

  it("reaches an older Claude model as the schema written out, first in the system prompt, and no output_config", async () => {
    expect((await ask("claude-3-5")).status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toBeUndefined();
    expect(sent.system).toEqual([{ type: "text", text: spelledOut(schema) }]);
  });

  it("a schema Claude would refuse to decode to (an object not closed by additionalProperties: false) goes in the prompt only", async () => {
    const open = { type: "object", properties: { city: { type: "string" } } };
    expect((await ask("claude", open)).status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toBeUndefined();
    expect(sent.system).toEqual([{ type: "text", text: spelledOut(open) }]);
  });
});

describe("an Anthropic client's output_format (the structured-outputs beta's form, deprecated)", () => {
  // pydantic-ai and raw HTTP clients still send `output_format` with the structured-outputs beta
  // (the TypeScript SDK moves it into output_config itself). It was stripped: Claude answered
  // free-form, with a 200, to a client counting on the schema.
  const askWith = (fields: Record<string, unknown>) => postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 100, messages: [{ role: "user", content: "Which city?" }], ...fields });

  it("reaches Claude as output_config.format, which means the same", async () => {
    const response = await askWith({ output_format: { type: "json_schema", schema } });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toEqual({ format: { type: "json_schema", schema } });
    expect(sent).not.toHaveProperty("output_format");
  });

  it("reaches an OpenAI model as response_format json_schema", async () => {
    expect((await postJson(rig.gateway, "/v1/messages", { model: "gpt", max_tokens: 100, messages: [{ role: "user", content: "Which city?" }], output_format: { type: "json_schema", schema } })).status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema, strict: true } });
  });

  it("sent beside output_config.format is a 400 saying to send one", async () => {
    const response = await askWith({ output_format: { type: "json_schema", schema }, output_config: { format: { type: "json_schema", schema } } });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("output_format: send the schema once, as output_config.format");
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});

describe("the SDKs' parse() helpers on a Claude target", () => {
  const Answer = z.object({ city: z.string(), population: z.number() });

  it("anthropic messages.parse(zodOutputFormat): output_config.format, and the parsed answer", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: '{"city":"Oslo","population":1}' });
    const message = await rig.gateway.anthropic.messages.parse({ model: "claude", max_tokens: 100, messages: [{ role: "user", content: "Biggest city?" }], output_config: { format: zodOutputFormat(Answer) } });
    expect(message.parsed_output).toEqual({ city: "Oslo", population: 1 });
    expect(rig.mocks.anthropic.requests.at(-1)!.body.output_config.format.type).toBe("json_schema");
  });

  it("openai parse(zodResponseFormat), strict: output_config.format", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: '{"city":"Oslo","population":1}' });
    const completion = await rig.gateway.openai.chat.completions.parse({ model: "claude", messages: [{ role: "user", content: "Biggest city?" }], response_format: zodResponseFormat(Answer, "answer") });
    expect(completion.choices[0]!.message.parsed).toEqual({ city: "Oslo", population: 1 });
    expect(rig.mocks.anthropic.requests.at(-1)!.body.output_config.format.schema.required).toEqual(["city", "population"]);
  });

  it("openai parse() with zodFunction: the tool is strict on Claude", async () => {
    rig.mocks.anthropic.enqueue({ kind: "tool-use", blocks: [{ name: "lookup", input: { city: "Oslo", population: 7 } }] });
    const completion = await rig.gateway.openai.chat.completions.parse({ model: "claude", messages: [{ role: "user", content: "Look up Oslo" }], tools: [zodFunction({ name: "lookup", parameters: Answer })] });
    expect(completion.choices[0]!.message.tool_calls?.[0]?.function.parsed_arguments).toEqual({ city: "Oslo", population: 7 });
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools[0].strict).toBe(true);
  });
});

describe("an Anthropic client's strict tool", () => {
  const tool = { name: "weather", strict: true, input_schema: schema as { type: "object" } };

  it("reaches a Claude model with structured outputs with strict", async () => {
    await rig.gateway.anthropic.messages.create({ model: "claude", max_tokens: 10, tools: [tool], messages: [{ role: "user", content: "x" }] });
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools[0].strict).toBe(true);
  });

  it("reaches an older Claude model without it (it would refuse the field), with a note", async () => {
    const { response } = await rig.gateway.anthropic.messages.create({ model: "claude-3-5", max_tokens: 10, tools: [tool], messages: [{ role: "user", content: "x" }] }).withResponse();
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools[0]).not.toHaveProperty("strict");
    expect(response.headers.get("x-tollgate-policies")).toContain("strict=dropped");
  });

  // Claude's strict mode refuses an object that is not closed (additionalProperties: false), so
  // such a tool goes without strict. It went silently: the app took its tool inputs for
  // schema-guaranteed, and they were not.
  it("whose schema Claude's strict mode cannot take reaches Claude without strict, with a note and a warning in the record", async () => {
    const open = { name: "save", strict: true, input_schema: { type: "object" as const, properties: { name: { type: "string" } }, required: ["name"] } };
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 10, tools: [open, tool], messages: [{ role: "user", content: "x" }] });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.map((sent: { strict?: boolean }) => sent.strict)).toEqual([undefined, true]);
    expect(response.headers.get("x-tollgate-policies")).toContain("strict=dropped");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings?.join("\n")).toContain('tool "save": Claude\'s strict mode decodes only a schema whose every object is closed (additionalProperties: false)');
  });

  it("on a route that rejects what its target does not take, is a 400 naming the tool", async () => {
    const open = { name: "save", strict: true, input_schema: { type: "object", properties: { name: { type: "string" } } } };
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude-rejecting", max_tokens: 10, tools: [open], messages: [{ role: "user", content: "x" }] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain('strict is not accepted by claude-sonnet-4-6 (anthropic) (tool "save": ');
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });

  it("that Claude takes strict gets no note", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 10, tools: [tool], messages: [{ role: "user", content: "x" }] });
    expect(response.headers.get("x-tollgate-policies") ?? "").not.toContain("strict=");
  });

  it("reaches an OpenAI model as function.strict", async () => {
    await rig.gateway.anthropic.messages.create({ model: "gpt", max_tokens: 10, tools: [tool], messages: [{ role: "user", content: "x" }] });
    expect(rig.mocks.openai.requests.at(-1)!.body.tools[0].function.strict).toBe(true);
  });

  it("with an optional property (which Claude allows), reaches an OpenAI model without strict: OpenAI would refuse it with a 400", async () => {
    const optional = { name: "weather", strict: true, input_schema: { type: "object" as const, properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"], additionalProperties: false } };
    const message = await rig.gateway.anthropic.messages.create({ model: "gpt", max_tokens: 10, tools: [optional], messages: [{ role: "user", content: "x" }] });
    expect(message.type).toBe("message");
    expect(rig.mocks.openai.requests.at(-1)!.body.tools[0].function).not.toHaveProperty("strict");
  });
});

describe("an Anthropic client's output_config.effort", () => {
  // How eagerly Claude spends tokens (thinking, text and tool calls alike): "low" is the
  // cheap setting an app picks on purpose. It was dropped without a word.
  it("reaches a Claude model as sent, beside a decoded format", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", {
      model: "claude",
      max_tokens: 100,
      messages: [{ role: "user", content: "Which city?" }],
      output_config: { effort: "low", format: { type: "json_schema", schema } },
    });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.output_config).toEqual({ effort: "low", format: { type: "json_schema", schema } });
  });

  it("is dropped for an OpenAI model, with a note and a warning in the record", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "gpt", max_tokens: 100, messages: [{ role: "user", content: "hi" }], output_config: { effort: "low" } });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("output_config");
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("reasoning_effort");
    expect(response.headers.get("x-tollgate-policies")).toContain("output_config.effort=dropped");
  });

  it("a level that is no word is refused, naming the field", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 100, messages: [{ role: "user", content: "hi" }], output_config: { effort: "LOW!" } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/^output_config\.effort: write an effort level/);
  });
});

describe("an OpenAI strict schema with keywords Claude does not decode to", () => {
  // OpenAI's strict mode takes string patterns and lengths and number bounds; Claude's structured
  // outputs refuse them with a 400. They go into the description instead, as the Anthropic SDK's
  // own transformJSONSchema (behind its parse() helpers) puts them.
  const withBounds = {
    type: "object",
    properties: { code: { type: "string", pattern: "^[A-Z]{3}$", minLength: 3 }, count: { type: "integer", minimum: 1 } },
    required: ["code", "count"],
    additionalProperties: false,
  };

  it("response_format: the bounds are written into each property's description", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "A code?" }],
      response_format: { type: "json_schema", json_schema: { name: "code", strict: true, schema: withBounds } },
    });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.output_config.format.schema).toEqual({
      type: "object",
      properties: {
        code: { type: "string", description: '{pattern: "^[A-Z]{3}$", minLength: 3}' },
        count: { type: "integer", description: "{minimum: 1}" },
      },
      additionalProperties: false,
      required: ["code", "count"],
    });
  });

  it("a strict tool: the same, and still strict", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "Look it up" }],
      tools: [{ type: "function", function: { name: "lookup", strict: true, parameters: withBounds } }],
    });
    expect(response.status).toBe(200);
    const tool = rig.mocks.anthropic.requests.at(-1)!.body.tools[0];
    expect(tool.strict).toBe(true);
    expect(tool.input_schema.properties.count).toEqual({ type: "integer", description: "{minimum: 1}" });
  });

  it("a schema with a map (an object open to any key) goes in the prompt: decoded, the map could only be empty", async () => {
    const withMap = { type: "object", properties: { scores: { type: "object", additionalProperties: { type: "number" } } }, required: ["scores"], additionalProperties: false };
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "Scores?" }],
      response_format: { type: "json_schema", json_schema: { name: "scores", schema: withMap } },
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toBeUndefined();
    expect(sent.system[0].text).toBe(spelledOut(withMap));
  });

  it("a schema with no type to decode to goes in the prompt instead of a 400", async () => {
    const untyped = { properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "Which city?" }],
      response_format: { type: "json_schema", json_schema: { name: "city", strict: true, schema: untyped } },
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body;
    expect(sent.output_config).toBeUndefined();
    expect(sent.system[0].text).toBe(spelledOut(untyped));
  });
});

describe("strict tools past Anthropic's limits on one request", () => {
  // Anthropic refuses a request with more than 20 strict tools, or more than 24 optional
  // parameters across them, with a 400. Agent frameworks mark every tool strict: such a
  // request is sent with no tool strict, answered without the guarantee instead of refused.
  const strictTool = (name: string, optional = 0) => ({
    type: "function" as const,
    function: {
      name,
      strict: true,
      parameters: {
        type: "object",
        properties: Object.fromEntries([["q", { type: "string" }], ...Array.from({ length: optional }, (_, i) => [`o${i}`, { type: "string" }])]),
        required: ["q"],
        additionalProperties: false,
      },
    },
  });
  const ask = (tools: ReturnType<typeof strictTool>[]) => postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: [{ role: "user", content: "x" }], tools });

  it("20 strict tools stay strict; 21 are sent without strict", async () => {
    expect((await ask(Array.from({ length: 20 }, (_, i) => strictTool(`t${i}`)))).status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.every((tool: { strict?: boolean }) => tool.strict === true)).toBe(true);
    const past = await ask(Array.from({ length: 21 }, (_, i) => strictTool(`t${i}`)));
    expect(past.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.some((tool: { strict?: boolean }) => "strict" in tool)).toBe(false);
    expect(past.headers.get("x-tollgate-policies")).toContain("strict=dropped");
  });

  it("24 optional parameters across the strict tools stay strict; 25 are sent without strict", async () => {
    await ask([strictTool("a", 12), strictTool("b", 12)]);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.map((tool: { strict?: boolean }) => tool.strict)).toEqual([true, true]);
    await ask([strictTool("a", 12), strictTool("b", 13)]);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.map((tool: { strict?: boolean }) => tool.strict)).toEqual([undefined, undefined]);
  });

  it("16 union-typed parameters across the strict tools stay strict; 17 are sent without strict", async () => {
    // A parameter of several types (a type list, or anyOf) is a union; all required, none optional.
    const unionTool = (name: string, unions: number) => {
      const tool = strictTool(name);
      const properties: Record<string, unknown> = { q: { type: "string" } };
      for (let i = 0; i < unions; i++) properties[`u${i}`] = i % 2 === 0 ? { type: ["string", "null"] } : { anyOf: [{ type: "string" }, { type: "integer" }] };
      tool.function.parameters = { ...tool.function.parameters, properties, required: Object.keys(properties) };
      return tool;
    };
    await ask([unionTool("a", 8), unionTool("b", 8)]);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.map((tool: { strict?: boolean }) => tool.strict)).toEqual([true, true]);
    await ask([unionTool("a", 8), unionTool("b", 9)]);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.tools.map((tool: { strict?: boolean }) => tool.strict)).toEqual([undefined, undefined]);
  });
});
