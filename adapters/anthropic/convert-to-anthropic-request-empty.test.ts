import { describe, expect, it } from "vitest";
import { parseOpenAIRequest } from "../../src/dialects/openai/parse-openai-request.ts";
import { convertToAnthropicRequest } from "../../adapters/anthropic/convert-to-anthropic-request.ts";

// Anthropic answers 400 invalid_request_error "messages.N: all messages must have non-empty content
// except for the optional final assistant message" (seen in anthropics/claude-code#6774, #4416;
// LiteLLM #2549). An OpenAI client replaying an earlier empty answer (content "" — which tollgate
// itself renders when a model returns no text) makes convertToAnthropicRequest emit an assistant
// turn with `content: []` in the middle of the conversation.

describe("convertToAnthropicRequest with an empty assistant turn from an OpenAI client", () => {
  it("never sends a non-final message with empty content", () => {
    const body = convertToAnthropicRequest(
      parseOpenAIRequest({
        model: "claude",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "" },
          { role: "user", content: "are you there?" },
        ],
      }),
      "claude-sonnet-4-6",
    );
    // The empty assistant turn is dropped and the two user turns around it merge (the roles must
    // still alternate), so no message is left with empty content.
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "are you there?" }] },
    ]);
  });
});

// Same family: Anthropic answers 400 "messages: text content blocks must be non-empty"
// (anthropics/claude-code#59812, #49171; LiteLLM users). OpenAI accepts "" for user and system content.
describe("convertToAnthropicRequest with empty text from an OpenAI client", () => {
  it("sends no empty text block (user content \"\", system content \"\")", () => {
    const body = convertToAnthropicRequest(
      parseOpenAIRequest({
        model: "claude",
        messages: [
          { role: "system", content: "" },
          { role: "user", content: [{ type: "text", text: "" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
        ],
      }),
      "claude-sonnet-4-6",
    );
    // The empty system prompt is left out and the empty text block dropped; the image stays.
    expect(body.system).toBeUndefined();
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] }]);
  });
});

// The openai SDK's runTools sends a tool message of content "" for a function that returns
// nothing. Anthropic refuses blank text ("text content blocks must be non-empty"; a tool_result
// of content "": anomalyco/opencode#15371) and takes a tool_result without content.
describe("convertToAnthropicRequest with an empty tool result from an OpenAI client", () => {
  it("sends the tool_result without content", () => {
    const body = convertToAnthropicRequest(
      parseOpenAIRequest({
        model: "claude",
        messages: [
          { role: "user", content: "Save it." },
          { role: "assistant", content: null, tool_calls: [{ id: "toolu_a", type: "function", function: { name: "save", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "toolu_a", content: "" },
        ],
      }),
      "claude-sonnet-4-6",
    );
    expect(body.messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a" }] });
  });
});

// OpenAI clients commonly send stop: ["\n"]. Anthropic answers 400 invalid_request_error
// "stop_sequences: each stop sequence must contain non-whitespace" (BerriAI/litellm#3286, fixed
// there in #3436/#7484 by dropping whitespace-only sequences). The stop policy only trims the
// count (policies/stop/stop.ts); convertToAnthropicRequest passes the sequence through.

describe("convertToAnthropicRequest stop sequences", () => {
  it("never sends a whitespace-only stop sequence to Anthropic", () => {
    const body = convertToAnthropicRequest(parseOpenAIRequest({ model: "claude", messages: [{ role: "user", content: "one line please" }], stop: ["\n", "END"] }), "claude-sonnet-4-6");
    // "\n" is dropped; the sequence with non-whitespace in it is still sent.
    expect(body.stop_sequences).toEqual(["END"]);
  });
});
