import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { convertToAnthropicRequest, DEFAULT_ANTHROPIC_MAX_TOKENS } from "./convert-to-anthropic-request.ts";

describe("convertToAnthropicRequest", () => {
  it("hoists system text, merges consecutive tool results into one user turn, and fills max_tokens", () => {
    const request: ChatRequest = {
      route: "claude",
      stream: false,
      streamUsage: false,
      temperature: 1.5,
      stop: ["END"],
      responseFormat: { type: "json" },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Two lookups please" }] },
        {
          role: "assistant",
          content: [
            { type: "tool-call", id: "a", name: "f", arguments: '{"x":1}' },
            { type: "tool-call", id: "b", name: "f", arguments: '{"x":2}' },
          ],
        },
        { role: "tool", toolCallId: "a", content: "one" },
        { role: "tool", toolCallId: "b", content: "two", isError: true },
      ],
    };
    expect(convertToAnthropicRequest(request, "claude-sonnet-4-6")).toEqual({
      model: "claude-sonnet-4-6",
      max_tokens: DEFAULT_ANTHROPIC_MAX_TOKENS,
      // The format instruction comes FIRST: the first tokens commit the rest.
      system: [
        { type: "text", text: "Be brief." },
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "Two lookups please" }] },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "a", name: "f", input: { x: 1 } },
            { type: "tool_use", id: "b", name: "f", input: { x: 2 } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: "one" },
            { type: "tool_result", tool_use_id: "b", content: "two", is_error: true },
          ],
        },
      ],
      temperature: 1,
      stop_sequences: ["END"],
    });
  });
});
