import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/gateway-error.ts";
import { parseAnthropicRequest } from "./parse-anthropic-request.ts";

describe("parseAnthropicRequest", () => {
  it("hoists system blocks and splits tool results out of the user turn, results first", () => {
    const request = parseAnthropicRequest({
      model: "claude",
      max_tokens: 256,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "-3C" }, { type: "text", text: "And tomorrow?" }] },
      ],
      stop_sequences: ["\n\nHuman:"],
      top_k: 5,
      tool_choice: { type: "any" },
      metadata: { user_id: "u-1" },
    });
    expect(request.messages).toEqual([
      // The client's own breakpoint is kept (default TTL 5 minutes).
      { role: "system", content: "You are terse.", cacheControl: { ttl: "5m" } },
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool-call", id: "toolu_1", name: "weather", arguments: '{"city":"Oslo"}' }] },
      { role: "tool", toolCallId: "toolu_1", content: "-3C" },
      { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
    ]);
    expect(request).toMatchObject({ maxTokens: 256, stop: ["\n\nHuman:"], topK: 5, toolChoice: { type: "required" }, user: "u-1", stream: false });
  });

  it("rejects a missing max_tokens with a 400 naming it and the fix", () => {
    const error = (() => {
      try {
        parseAnthropicRequest({ model: "claude", messages: [{ role: "user", content: "hi" }] });
      } catch (caught) {
        return caught as GatewayError;
      }
    })();
    expect(error?.status).toBe(400);
    expect(error?.param).toBe("max_tokens");
    expect(error?.message).toMatch(/^max_tokens: required: write the most output tokens/);
  });

  it("rejects a system role inside messages and says where system text goes", () => {
    expect(() => parseAnthropicRequest({ model: "c", max_tokens: 5, messages: [{ role: "system", content: "x" }] })).toThrow(/top-level `system`/);
  });
});
