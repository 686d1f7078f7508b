import { describe, expect, it } from "vitest";
import { parseAnthropicRequest } from "./anthropic/parse-anthropic-request.ts";
import { parseOpenAIRequest } from "./openai/parse-openai-request.ts";

// A request field of the wrong JSON type, or a required one left out, got zod's own text
// ("messages: Invalid input: expected array, received undefined"): the field, but not the fix.

const messageOf = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the request was accepted");
};

describe("a request field of the wrong type", () => {
  it.each([
    [{ model: "gpt" }, "messages: required: write an array"],
    [{ model: "gpt", stream: "yes", messages: [{ role: "user", content: "hi" }] }, "stream: write true or false, not a string"],
    [[], "(top level): write a JSON object, not an array"],
    // Was zod's "Too big: expected number to be <=2" and "expected int, received number" read as "not a number".
    [{ model: "gpt", temperature: 3, messages: [{ role: "user", content: "hi" }] }, "temperature: write a number of at most 2"],
    [{ model: "gpt", seed: 1.5, messages: [{ role: "user", content: "hi" }] }, "seed: write a whole number, not a fraction"],
  ])("OpenAI %j → %s", (body, message) => {
    expect(messageOf(() => parseOpenAIRequest(body))).toBe(message);
  });

  it("Anthropic: the same words", () => {
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10 }))).toBe("messages: required: write an array");
  });

  // Was "required: …" for a field that is there, of the wrong type.
  it.each([
    [{ model: 5, messages: [{ role: "user", content: "hi" }] }, "model: write a string, not a number: write the name of a tollgate route"],
  ])("OpenAI: a field sent with the wrong type is not called missing: %j", (body, message) => {
    expect(messageOf(() => parseOpenAIRequest(body))).toBe(message);
  });

  it.each([
    [{ model: "claude", max_tokens: "1024", messages: [{ role: "user", content: "hi" }] }, "max_tokens: write a number, not a string: write the most output tokens to allow, e.g. 1024"],
    [{ model: ["claude"], max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, "model: write a string, not an array: write the name of a tollgate route"],
    // Was "write a number, not a number".
    [{ model: "claude", max_tokens: 1.5, messages: [{ role: "user", content: "hi" }] }, "max_tokens: write a whole number, not a fraction: write the most output tokens to allow, e.g. 1024"],
  ])("Anthropic: a field sent with the wrong type is not called missing: %j", (body, message) => {
    expect(messageOf(() => parseAnthropicRequest(body))).toBe(message);
  });

  // Was: "system: Invalid input", zod's words for a union, with no fix.
  it("Anthropic: a system that is neither a string nor blocks says what to write", () => {
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, system: 3, messages: [{ role: "user", content: "hi" }] }))).toBe(
      'system: write a string, or an array of text blocks ({"type": "text", "text": "…"})',
    );
  });

  it("Anthropic: a block in a turn that cannot hold it is named in plain words", () => {
    const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: [image] }] }))).toBe(
      "messages[1].content[0]: an image block cannot be in an assistant turn: send images in user turns",
    );
  });
});

describe("what an Anthropic client may send that tollgate does not carry", () => {
  it("a server tool is refused by name, before its missing input_schema", () => {
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, tools: [{ type: "web_search_20250305", name: "web_search" }], messages: [{ role: "user", content: "hi" }] }))).toBe(
      'tools[0].type: tollgate carries only tools your app runs (type "custom" with an input_schema, or Anthropic\'s text_editor, bash, memory and computer tools); Claude\'s server tools (web_search, code_execution, …) are not carried: remove this one',
    );
  });

  it("a PDF document block is refused with what to send instead", () => {
    const message = messageOf(() =>
      parseAnthropicRequest({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }] }] }),
    );
    expect(message).toMatch(/^messages\[0\]\.content\[0\]\.type: .*tollgate does not carry "document" blocks: send a PDF's text as text/);
  });
});

describe("inputs tollgate does not carry, named with what to do (was: zod's 'Invalid discriminator value')", () => {
  const user = (content: unknown) => ({ model: "gpt", messages: [{ role: "user", content }] });
  it.each([
    ["an OpenAI file part", user([{ type: "text", text: "Total?" }, { type: "file", file: { filename: "invoice.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } }]), /^messages\[0\]\.content\[1\]\.type: .*tollgate does not carry "file" or "input_audio" parts/],
    ["an OpenAI input_audio part", user([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]), /^messages\[0\]\.content\[0\]\.type: .*transcribe audio first/],
    ["OpenAI's allowed_tools", { ...user("hi"), tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } } }, /^tool_choice\.type: .*tollgate does not carry "allowed_tools"/],
    ["an OpenAI custom tool", { ...user("hi"), tools: [{ type: "custom", custom: { name: "grammar" } }] }, /^tools\[0\]\.type: tollgate carries function tools only/],
  ])("%s", (_what, body, message) => {
    expect(messageOf(() => parseOpenAIRequest(body))).toMatch(message);
  });

  it("an empty Anthropic user turn (Anthropic refuses it; dropped, the turn before would be answered instead)", () => {
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: [] }] }))).toBe(
      "messages[0].content: send at least one content block in a user turn",
    );
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "a" }, { role: "user", content: "" }] }))).toBe(
      "messages[2].content: send at least one content block in a user turn",
    );
  });

  it("Anthropic's MCP connector (mcp_servers), whose tools Anthropic would call itself", () => {
    const body = { model: "claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }], mcp_servers: [{ type: "url", url: "https://mcp.example.com/sse", name: "example" }] };
    expect(messageOf(() => parseAnthropicRequest(body))).toMatch(/^mcp_servers: tollgate does not carry the MCP connector/);
    expect(parseAnthropicRequest({ ...body, mcp_servers: [] }).messages).toHaveLength(1); // none: nothing to carry
  });

  it("a document block inside an Anthropic tool_result", () => {
    const result = { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "x" } }] };
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10, messages: [{ role: "user", content: [result] }] }))).toMatch(
      /^messages\[0\]\.content\[0\]\.content\[0\]\.type: a tool result's block type must be "text" or "image" \(tollgate does not carry "document"/,
    );
  });
});

describe("what an OpenAI client may ask that tollgate cannot honour", () => {
  it("an answer in audio is refused, naming the field, instead of a text answer without the audio the app reads", () => {
    const ask = (extra: object) => () => parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: "hi" }], ...extra });
    expect(messageOf(ask({ modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } }))).toBe('modalities[1]: tollgate carries text answers only: remove "audio" from modalities');
    expect(messageOf(ask({ audio: { voice: "alloy", format: "wav" } }))).toBe('audio: tollgate carries text answers only: remove audio (and modalities: ["audio"])');
    expect(parseOpenAIRequest({ model: "gpt", modalities: ["text"], messages: [{ role: "user", content: "hi" }] }).messages).toHaveLength(1);
  });

  it("OpenAI's web search is refused, naming the field, instead of an answer that was never searched", () => {
    const ask = (extra: object) => () => parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: "hi" }], ...extra });
    expect(messageOf(ask({ web_search_options: {} }))).toMatch(/^web_search_options: web search is OpenAI's own tool, which tollgate does not carry/);
    expect(parseOpenAIRequest({ model: "gpt", web_search_options: null, messages: [{ role: "user", content: "hi" }] }).messages).toHaveLength(1);
  });
});

describe("an option sent as null", () => {
  // Some clients write an unset option as null; OpenAI reads that as unset. tool_choice null was
  // a 400 "tool_choice: Invalid input".
  it("tools, tool_choice and response_format null are unset", () => {
    const parsed = parseOpenAIRequest({ model: "gpt", tools: null, tool_choice: null, response_format: null, messages: [{ role: "user", content: "hi" }] });
    expect([parsed.tools, parsed.toolChoice, parsed.responseFormat]).toEqual([undefined, undefined, undefined]);
  });
});
