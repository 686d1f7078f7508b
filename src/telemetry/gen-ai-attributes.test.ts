import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../model/chat-request.ts";
import {
  chatInputMessagesAttributes,
  chatOutputMessagesAttributes,
  chatRequestAttributes,
  chatResponseAttributes,
  chatSpanName,
} from "./gen-ai-attributes.ts";

const SECRET_PROMPT = "my card number is 4111-1111";
const SECRET_SYSTEM = "you are the payroll bot";

function request(overrides: Partial<ChatRequest>): ChatRequest {
  return {
    route: "smart",
    messages: [
      { role: "system", content: SECRET_SYSTEM },
      { role: "user", content: [{ type: "text", text: SECRET_PROMPT }] },
    ],
    stream: false,
    streamUsage: false,
    ...overrides,
  };
}

describe("chatSpanName", () => {
  it("is the operation and the model", () => {
    expect(chatSpanName("gpt-4o")).toBe("chat gpt-4o");
  });
});

describe("OpenAI request with cached input and reasoning", () => {
  const chatRequest = request({ maxTokens: 256, temperature: 0.2, topP: 0.9, seed: 7, stop: ["END", "STOP"] });
  const target = {
    providerName: "openai-main",
    providerType: "openai" as const,
    model: "o4-mini",
    baseUrl: "https://api.openai.com/v1",
  };
  const response = {
    responseId: "chatcmpl-abc",
    responseModel: "o4-mini-2025-04-16",
    finishReason: "tool-calls" as const,
    // OpenAI reported prompt_tokens 2000 with 1200 cached; tollgate keeps the uncached 800.
    usage: { inputTokens: 800, cacheReadTokens: 1200, outputTokens: 300, reasoningTokens: 120 },
    timeToFirstChunkSeconds: 0.42,
  };

  it("maps the request", () => {
    expect(chatRequestAttributes(chatRequest, target)).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "o4-mini",
      "gen_ai.request.max_tokens": 256,
      "gen_ai.request.temperature": 0.2,
      "gen_ai.request.top_p": 0.9,
      "gen_ai.request.seed": 7,
      "gen_ai.request.stop_sequences": ["END", "STOP"],
      "server.address": "api.openai.com",
      "server.port": 443,
      "tollgate.provider": "openai-main",
    });
  });

  it("maps the response, counting cached tokens as input", () => {
    expect(chatResponseAttributes(response)).toEqual({
      "gen_ai.response.id": "chatcmpl-abc",
      "gen_ai.response.model": "o4-mini-2025-04-16",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 2000,
      "gen_ai.usage.output_tokens": 300,
      "gen_ai.usage.cache_read.input_tokens": 1200,
      "gen_ai.usage.reasoning.output_tokens": 120,
      "gen_ai.response.time_to_first_chunk": 0.42,
    });
  });

  it("carries no prompt text", () => {
    const everything = JSON.stringify([chatRequestAttributes(chatRequest, target), chatResponseAttributes(response)]);
    expect(everything).not.toContain("4111");
    expect(everything).not.toContain("payroll");
    expect(everything).not.toContain("messages");
  });
});

describe("Anthropic request with 5-minute and 1-hour cache writes", () => {
  const chatRequest = request({ maxTokens: 1024, topK: 40 });
  const target = { providerName: "claude", providerType: "anthropic" as const, model: "claude-sonnet-4-5" };

  it("maps the request without server attributes when no base URL is configured", () => {
    expect(chatRequestAttributes(chatRequest, target)).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.request.max_tokens": 1024,
      "gen_ai.request.top_k": 40,
      "tollgate.provider": "claude",
    });
  });

  it("adds both cache write durations into cache_creation and into the input total", () => {
    const attributes = chatResponseAttributes({
      responseId: "msg_01",
      responseModel: "claude-sonnet-4-5-20250929",
      finishReason: "stop-sequence",
      usage: { inputTokens: 50, cacheReadTokens: 0, cacheWrite5mTokens: 1000, cacheWrite1hTokens: 2000, outputTokens: 80 },
    });
    expect(attributes).toEqual({
      "gen_ai.response.id": "msg_01",
      "gen_ai.response.model": "claude-sonnet-4-5-20250929",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 3050,
      "gen_ai.usage.output_tokens": 80,
      "gen_ai.usage.cache_read.input_tokens": 0,
      "gen_ai.usage.cache_creation.input_tokens": 3000,
    });
  });
});

describe("edge cases", () => {
  it("names an OpenAI-compatible provider by its config name and reads default and explicit ports", () => {
    const local = chatRequestAttributes(request({}), {
      providerName: "local-llama",
      providerType: "openai-compatible",
      model: "qwen3-8b",
      baseUrl: "http://localhost/v1",
    });
    expect(local["gen_ai.provider.name"]).toBe("local-llama");
    expect([local["server.address"], local["server.port"]]).toEqual(["localhost", 80]);

    const ipv6 = chatRequestAttributes(request({}), {
      providerName: "box",
      providerType: "openai-compatible",
      model: "m",
      baseUrl: "http://[::1]:8080/v1",
    });
    expect([ipv6["server.address"], ipv6["server.port"]]).toEqual(["::1", 8080]);
  });

  it("leaves out what was not reported instead of writing zeros", () => {
    expect(chatRequestAttributes(request({ stop: [] }), { providerName: "o", providerType: "openai", model: "m" })).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "m",
      "tollgate.provider": "o",
    });
    expect(chatResponseAttributes({ usage: {} })).toEqual({});
    expect(chatResponseAttributes({ usage: { outputTokens: 5 } })).toEqual({ "gen_ai.usage.output_tokens": 5 });
  });
});

describe("opt-in content capture", () => {
  it("writes the convention's message structure as JSON", () => {
    const messages: ChatRequest["messages"] = [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image", source: "url", url: "https://example.com/cat.png" },
          { type: "image", source: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", id: "call_1", name: "look", arguments: '{"q":"cat"}' }] },
      { role: "tool", toolCallId: "call_1", content: "a cat" },
    ];
    const input = chatInputMessagesAttributes(messages)["gen_ai.input.messages"];
    expect(JSON.parse(String(input))).toEqual([
      { role: "system", parts: [{ type: "text", content: "be brief" }] },
      {
        role: "user",
        parts: [
          { type: "text", content: "what is this?" },
          { type: "uri", modality: "image", uri: "https://example.com/cat.png" },
          { type: "blob", modality: "image", mime_type: "image/png" },
        ],
      },
      { role: "assistant", parts: [{ type: "tool_call", id: "call_1", name: "look", arguments: '{"q":"cat"}' }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "call_1", response: "a cat" }] },
    ]);
    expect(String(input)).not.toContain("iVBORw0KGgo=");

    const output = chatOutputMessagesAttributes(
      [
        { type: "text", text: "A cat." },
        { type: "tool-call", id: "call_2", name: "look", arguments: '{"q":"dog"}' },
      ],
      "length",
    )["gen_ai.output.messages"];
    expect(JSON.parse(String(output))).toEqual([
      {
        role: "assistant",
        parts: [
          { type: "text", content: "A cat." },
          { type: "tool_call", id: "call_2", name: "look", arguments: '{"q":"dog"}' },
        ],
        finish_reason: "length",
      },
    ]);
  });
});

// The Anthropic adapter sends max_tokens 4096 where the request names none (Anthropic requires
// one); the span said nothing of it, though its gen_ai.request.* are what was sent (found by review).
describe("a request that names no max_tokens", () => {
  const target = (providerType: "openai" | "anthropic") => ({ providerName: providerType, providerType, model: "m", baseUrl: "https://example.test/v1" });

  it("to Claude, says the 4,096 its adapter sends", () => {
    expect(chatRequestAttributes(request({}), target("anthropic"))["gen_ai.request.max_tokens"]).toBe(4096);
  });

  it("to OpenAI, says none, as none is sent", () => {
    expect(chatRequestAttributes(request({}), target("openai"))).not.toHaveProperty("gen_ai.request.max_tokens");
  });
});
