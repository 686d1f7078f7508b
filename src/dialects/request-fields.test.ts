import { describe, expect, it } from "vitest";
import { parseOpenAIRequest } from "./openai/parse-openai-request.ts";
import { parseAnthropicRequest } from "./anthropic/parse-anthropic-request.ts";
import { convertToOpenAIRequest } from "../../adapters/openai/convert-to-openai-request.ts";
import { convertToAnthropicRequest } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import { GatewayError } from "../errors/gateway-error.ts";

// Request fields that change the answer or its price, carried from either dialect to either provider.
// Verified against node_modules/openai/resources/chat/completions/completions.d.ts
// (ChatCompletionCreateParamsBase.parallel_tool_calls, ChatCompletionContentPartImage.ImageURL.detail),
// node_modules/openai/resources/shared.d.ts (FunctionDefinition.strict) and
// node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts (ToolChoiceAuto/Any/Tool.disable_parallel_tool_use,
// ToolResultBlockParam.content: string | Array<TextBlockParam | ImageBlockParam | ...>).

const weatherTool = { type: "function", function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true } };

describe("OpenAI client → OpenAI provider", () => {
  it("keeps function.strict (structured outputs for tool calls)", () => {
    const body = convertToOpenAIRequest(parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: "hi" }], tools: [weatherTool] }), "gpt-4o", "openai");
    expect((body.tools![0] as { function: { strict?: boolean } }).function.strict).toBe(true);
  });

  it("keeps frequency_penalty, presence_penalty and logit_bias", () => {
    const body = convertToOpenAIRequest(
      parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: "hi" }], frequency_penalty: 2, presence_penalty: -1, logit_bias: { "1234": -100 } }),
      "gpt-4o",
      "openai",
    );
    expect([body.frequency_penalty, body.presence_penalty, body.logit_bias]).toEqual([2, -1, { "1234": -100 }]);
  });

  it("keeps parallel_tool_calls: false", () => {
    const body = convertToOpenAIRequest(parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: "hi" }], tools: [weatherTool], parallel_tool_calls: false }), "gpt-4o", "openai");
    expect(body.parallel_tool_calls).toBe(false);
  });

  it("keeps image_url.detail (without it OpenAI applies its default, \"auto\", which prices the image differently)", () => {
    const body = convertToOpenAIRequest(
      parseOpenAIRequest({ model: "gpt", messages: [{ role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } }] }] }),
      "gpt-4o",
      "openai",
    );
    const parts = body.messages[0]!.content as Array<{ type: string; image_url?: { detail?: string } }>;
    expect(parts[1]!.image_url!.detail).toBe("low");
  });
});

describe("OpenAI client → Anthropic provider", () => {
  it("parallel_tool_calls: false becomes tool_choice.disable_parallel_tool_use", () => {
    const body = convertToAnthropicRequest(parseOpenAIRequest({ model: "claude", messages: [{ role: "user", content: "hi" }], tools: [weatherTool], tool_choice: "auto", parallel_tool_calls: false }), "claude-sonnet-4-6");
    expect(body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });
});

describe("Anthropic client", () => {
  const tools = [{ name: "weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];

  it("→ OpenAI provider: a tool_result with is_error says so in its text (Chat Completions has no such field)", () => {
    const turns = (isError: boolean) =>
      parseAnthropicRequest({
        model: "gpt",
        max_tokens: 100,
        tools,
        messages: [
          { role: "user", content: "weather in Oslo?" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "service unavailable", ...(isError ? { is_error: true } : {}) }] },
        ],
      });
    const toolMessage = (isError: boolean) => convertToOpenAIRequest(turns(isError), "gpt-4o", "openai").messages.find((message) => message.role === "tool");
    expect(toolMessage(true)).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "Error: service unavailable" });
    expect(toolMessage(false)).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "service unavailable" });
  });

  it("→ Anthropic provider keeps disable_parallel_tool_use", () => {
    const body = convertToAnthropicRequest(parseAnthropicRequest({ model: "claude", max_tokens: 100, messages: [{ role: "user", content: "hi" }], tools, tool_choice: { type: "any", disable_parallel_tool_use: true } }), "claude-sonnet-4-6");
    expect(body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
  });

  it("→ OpenAI provider turns disable_parallel_tool_use into parallel_tool_calls: false", () => {
    const body = convertToOpenAIRequest(parseAnthropicRequest({ model: "gpt", max_tokens: 100, messages: [{ role: "user", content: "hi" }], tools, tool_choice: { type: "auto", disable_parallel_tool_use: true } }), "gpt-4o", "openai");
    expect(body.parallel_tool_calls).toBe(false);
  });
});

describe("the end user, for the providers' abuse monitoring", () => {
  const ask = { model: "gpt", safety_identifier: "user-7f3a", messages: [{ role: "user", content: "hi" }] };
  it("safety_identifier goes to OpenAI as such, to Claude as metadata.user_id, and not to a local decoder", () => {
    expect(convertToOpenAIRequest(parseOpenAIRequest(ask), "gpt-4o", "openai").safety_identifier).toBe("user-7f3a");
    expect(convertToAnthropicRequest(parseOpenAIRequest(ask), "claude-sonnet-4-6").metadata).toEqual({ user_id: "user-7f3a" });
    expect(convertToOpenAIRequest(parseOpenAIRequest(ask), "tiny-local", "compatible")).not.toHaveProperty("safety_identifier");
  });

  it("user wins for Claude when both are sent", () => {
    expect(convertToAnthropicRequest(parseOpenAIRequest({ ...ask, user: "alice" }), "claude-sonnet-4-6").metadata).toEqual({ user_id: "alice" });
  });
});

describe("reasoning", () => {
  it("OpenAI client → OpenAI provider keeps reasoning_effort", () => {
    const body = convertToOpenAIRequest(parseOpenAIRequest({ model: "o", reasoning_effort: "high", messages: [{ role: "user", content: "prove it" }] }), "o4-mini", "openai");
    expect(body.reasoning_effort).toBe("high");
  });

  it("takes every level the OpenAI SDK knows (none, xhigh, max) and any the model may add; a malformed one is a 400 naming it", () => {
    for (const level of ["none", "minimal", "xhigh", "max", "ultra"]) {
      const body = convertToOpenAIRequest(parseOpenAIRequest({ model: "o", reasoning_effort: level, messages: [{ role: "user", content: "prove it" }] }), "o3", "openai");
      expect(body.reasoning_effort).toBe(level);
    }
    const malformed = () => parseOpenAIRequest({ model: "o", reasoning_effort: "High!", messages: [{ role: "user", content: "prove it" }] });
    expect(malformed).toThrow(GatewayError);
    expect(malformed).toThrow(/^reasoning_effort: .*"low", "medium" or "high"/);
  });

  it("an Anthropic client's thinking is carried as sent, and one without a type is a 400 naming it", () => {
    const thinking = { type: "enabled", budget_tokens: 2048 };
    expect(parseAnthropicRequest({ model: "claude", max_tokens: 4000, thinking, messages: [{ role: "user", content: "prove it" }] }).thinking).toEqual(thinking);
    const untyped = () => parseAnthropicRequest({ model: "claude", max_tokens: 4000, thinking: { budget_tokens: 2048 }, messages: [{ role: "user", content: "prove it" }] });
    expect(untyped).toThrow(GatewayError);
    expect(untyped).toThrow(/^thinking\.type: required: the kind of thinking/);
  });
});


describe("images a tool returned (Anthropic client)", () => {
  const png = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
  const tools = [{ name: "screenshot", input_schema: { type: "object", properties: {} } }];
  const body = {
    model: "r",
    max_tokens: 100,
    tools,
    messages: [
      { role: "user", content: "what is on both screens?" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_1", name: "screenshot", input: {} },
          { type: "tool_use", id: "toolu_2", name: "screenshot", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "left:" }, png] },
          { type: "tool_result", tool_use_id: "toolu_2", content: [png] },
        ],
      },
    ],
  };

  it("→ Anthropic provider: the tool_result keeps its image after its text", () => {
    const sent = convertToAnthropicRequest(parseAnthropicRequest(body), "claude-sonnet-4-6");
    const results = sent.messages[2]!.content as Array<{ type: string; tool_use_id: string; content: unknown }>;
    expect(results.map((result) => [result.tool_use_id, result.content])).toEqual([
      ["toolu_1", [{ type: "text", text: "left:" }, png]],
      ["toolu_2", [png]],
    ]);
  });

  it("→ OpenAI provider: tool messages keep the text, and one user message after them carries the images", () => {
    const sent = convertToOpenAIRequest(parseAnthropicRequest(body), "gpt-4o", "openai");
    expect(sent.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "toolu_1", content: "left:" },
      { role: "tool", tool_call_id: "toolu_2", content: "" },
      {
        role: "user",
        content: [
          { type: "text", text: "Images returned by tool call toolu_1, toolu_2:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      },
    ]);
  });
});
