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
  ])("OpenAI %j → %s", (body, message) => {
    expect(messageOf(() => parseOpenAIRequest(body))).toBe(message);
  });

  it("Anthropic: the same words", () => {
    expect(messageOf(() => parseAnthropicRequest({ model: "claude", max_tokens: 10 }))).toBe("messages: required: write an array");
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
