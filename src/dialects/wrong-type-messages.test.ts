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
