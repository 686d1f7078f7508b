import { describe, expect, it } from "vitest";
import { APP_KEY, readSseStream, useMockedGateway } from "./support/gateway.ts";

// The official Anthropic SDK, pointed at tollgate, reaching Anthropic and OpenAI (msw stand-ins).

const rig = useMockedGateway();

describe("Anthropic client → Anthropic provider", () => {
  it("answers non-streaming with cache usage split by TTL, unchanged", async () => {
    rig.mocks.anthropic.enqueue({
      kind: "text",
      text: "Bonjour.",
      usage: { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 2000, cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 100 } },
    });
    const { data, response } = await rig.gateway.anthropic.messages
      .create({ model: "claude", max_tokens: 64, system: "Translate to French.", messages: [{ role: "user", content: "Hello." }], top_k: 10 } as never)
      .withResponse();
    expect(data.content).toEqual([{ type: "text", text: "Bonjour." }]);
    expect(data.stop_reason).toBe("end_turn");
    expect(data.usage).toMatchObject({
      input_tokens: 12,
      output_tokens: 3,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 400,
      cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 100 },
    });
    expect(response.headers.get("x-tollgate-input-tokens")).toBe("2412");
    expect(response.headers.get("x-tollgate-cached-tokens")).toBe("2000");
    expect(rig.mocks.anthropic.requests[0]!.body).toMatchObject({ model: "claude-sonnet-4-6", max_tokens: 64, system: [{ type: "text", text: "Translate to French." }], top_k: 10 });
  });

  it("streams with the SDK's MessageStream: text, stop sequence and cumulative usage", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["Un", ", deux"], stopReason: "stop_sequence", stopSequence: "trois", usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 5 } });
    const stream = rig.gateway.anthropic.messages.stream({ model: "claude", max_tokens: 50, stop_sequences: ["trois"], messages: [{ role: "user", content: "Count in French" }] });
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    expect(deltas.join("")).toBe("Un, deux");
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("trois");
    expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 5 });
  });

  it("frames events as Anthropic does and ends with a summary comment that SSE readers skip", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["Hi"], usage: { input_tokens: 4, output_tokens: 1 } });
    const response = await fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const { events, summary } = await readSseStream(response);
    expect(events.map((e) => e.event ?? "(unnamed)")).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(JSON.parse(events[0]!.data).message.usage).toMatchObject({ input_tokens: 4 });
    expect(summary).toMatchObject({ route: "claude", provider: "anthropic", inputTokens: 4, outputTokens: 1 });
  });
});

describe("Anthropic client → OpenAI provider", () => {
  it("converts the request and renders OpenAI's answer as a Message, cache tokens moved out of input", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "42", usage: { prompt_tokens: 100, completion_tokens: 1, cached_tokens: 60, reasoning_tokens: 0 } });
    const message = await rig.gateway.anthropic.messages.create({
      model: "gpt",
      max_tokens: 5,
      system: [{ type: "text", text: "Answer with a number." }],
      messages: [
        { role: "user", content: "What is 6 × 7?" },
        { role: "assistant", content: "Let me think." },
        { role: "user", content: "Just the number." },
      ],
      stop_sequences: ["\n"],
      temperature: 0,
    } as never);
    expect(message.content).toEqual([{ type: "text", text: "42" }]);
    expect(message.stop_reason).toBe("end_turn");
    // Anthropic's input_tokens excludes cache reads: 100 prompt tokens, 60 of them cached.
    expect(message.usage).toMatchObject({ input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 1 });
    expect(rig.mocks.openai.requests[0]!.body).toEqual({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "Answer with a number." },
        { role: "user", content: "What is 6 × 7?" },
        { role: "assistant", content: "Let me think." },
        { role: "user", content: "Just the number." },
      ],
      max_completion_tokens: 5,
      temperature: 0,
      stop: ["\n"],
      stream: false,
    });
  });

  it("streams OpenAI tool calls as tool_use blocks the SDK accumulates, and round-trips the tool result", async () => {
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ id: "call_7", name: "add", arguments: '{"a":6,"b":7}' }], usage: { prompt_tokens: 30, completion_tokens: 9 } });
    const tools = [{ name: "add", description: "Adds", input_schema: { type: "object" as const, properties: { a: { type: "number" }, b: { type: "number" } } } }];
    const message = await rig.gateway.anthropic.messages
      .stream({ model: "gpt", max_tokens: 100, tools, tool_choice: { type: "tool", name: "add" }, messages: [{ role: "user", content: "6+7?" }] })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: "call_7", name: "add", input: { a: 6, b: 7 } }]);
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 9 });
    expect(rig.mocks.openai.requests[0]!.body).toMatchObject({
      tools: [{ type: "function", function: { name: "add", description: "Adds" } }],
      tool_choice: { type: "function", function: { name: "add" } },
      stream_options: { include_usage: true },
    });

    rig.mocks.openai.enqueue({ kind: "text", text: "13" });
    await rig.gateway.anthropic.messages.create({
      model: "gpt",
      max_tokens: 100,
      tools,
      messages: [
        { role: "user", content: "6+7?" },
        { role: "assistant", content: [{ type: "tool_use", id: "call_7", name: "add", input: { a: 6, b: 7 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_7", content: "13" }] },
      ],
    });
    expect(rig.mocks.openai.requests[1]!.body.messages).toEqual([
      { role: "user", content: "6+7?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_7", type: "function", function: { name: "add", arguments: '{"a":6,"b":7}' } }] },
      { role: "tool", tool_call_id: "call_7", content: "13" },
    ]);
  });
});
