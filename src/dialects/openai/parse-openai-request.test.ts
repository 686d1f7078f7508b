import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/gateway-error.ts";
import { parseOpenAIRequest } from "./parse-openai-request.ts";

describe("parseOpenAIRequest", () => {
  it("maps a multi-turn tool conversation into the neutral model", () => {
    const request = parseOpenAIRequest({
      model: "gpt",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "-3C" },
      ],
      max_tokens: 100,
      max_completion_tokens: 50,
      stop: "END",
      temperature: 0.2,
      top_k: 40,
      response_format: { type: "json_object" },
      tool_choice: { type: "function", function: { name: "weather" } },
      tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request).toEqual({
      route: "gpt",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }, { type: "image", source: "base64", mediaType: "image/png", data: "AAAA" }] },
        { role: "assistant", content: [{ type: "tool-call", id: "call_1", name: "weather", arguments: '{"city":"Oslo"}' }] },
        { role: "tool", toolCallId: "call_1", content: "-3C" },
      ],
      stream: true,
      streamUsage: true,
      maxTokens: 50,
      maxTokensField: "max_completion_tokens",
      temperature: 0.2,
      topK: 40,
      stop: ["END"],
      tools: [{ name: "weather", parameters: { type: "object" } }],
      toolChoice: { type: "tool", name: "weather" },
      responseFormat: { type: "json" },
    });
  });

  it.each([
    [{ model: "gpt", messages: [{ role: "user", content: 42 }] }, "messages[0].content"],
    [{ model: "gpt", messages: [{ role: "wizard", content: "hi" }] }, "messages[0].role"],
    [{ model: "gpt", messages: [{ role: "user", content: "hi" }], temperature: "hot" }, "temperature"],
    [{ model: "gpt", messages: [{ role: "user", content: "hi" }], max_tokens: 0 }, "max_tokens"],
    [{ model: "gpt", messages: [{ role: "user", content: "hi" }], n: 3 }, "n"],
    [{ messages: [{ role: "user", content: "hi" }] }, "model"],
  ])("rejects %j with a 400 naming %s", (body, param) => {
    let caught: unknown;
    try {
      parseOpenAIRequest(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).status).toBe(400);
    expect((caught as GatewayError).param).toBe(param);
    expect((caught as GatewayError).message.startsWith(`${param}: `)).toBe(true);
  });
});
