import { describe, expect, it } from "vitest";
import { APP_KEY, readSseStream, useMockedGateway } from "./support/gateway.ts";

// The official OpenAI SDK, pointed at tollgate, reaching OpenAI and Anthropic (msw stand-ins).

const rig = useMockedGateway();

describe("OpenAI client → OpenAI provider", () => {
  it("answers non-streaming with the provider's text, usage and tollgate headers", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "Paris.", usage: { prompt_tokens: 20, completion_tokens: 2, cached_tokens: 8 } });
    const { data, response } = await rig.gateway.openai.chat.completions
      .create({
        model: "gpt",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Capital of France?" }],
        max_tokens: 20,
        temperature: 0.3,
        top_p: 0.8,
        seed: 7,
        stop: ["\n\n"],
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("Paris.");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 2, total_tokens: 22, prompt_tokens_details: { cached_tokens: 8 } });
    expect(response.headers.get("x-tollgate-route")).toBe("gpt");
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect(response.headers.get("x-tollgate-input-tokens")).toBe("20");
    expect(response.headers.get("x-tollgate-output-tokens")).toBe("2");
    expect(response.headers.get("x-tollgate-cached-tokens")).toBe("8");
    expect(Number(response.headers.get("x-tollgate-ttft-ms"))).toBeGreaterThan(0);
    expect(response.headers.get("x-tollgate-request-id")).toMatch(/^req_[0-9a-f]{32}$/);

    const sent = rig.mocks.openai.requests[0]!;
    expect(sent.headers.authorization).toBe("Bearer sk-test-openai");
    expect(sent.body).toMatchObject({
      model: "gpt-4o",
      // The format instruction becomes the system prompt's first line; the schema goes natively.
      messages: [
        { role: "system", content: 'Respond with a single JSON object that conforms to the JSON Schema "answer", and nothing else.\nBe brief.' },
        { role: "user", content: "Capital of France?" },
      ],
      max_completion_tokens: 20,
      temperature: 0.3,
      top_p: 0.8,
      seed: 7,
      stop: ["\n\n"],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
    });
  });

  it("streams chunks, asks upstream for usage always, and sends the usage chunk only when asked", async () => {
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["Hel", "lo", "!"], usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const stream = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }], stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello!");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(rig.mocks.openai.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    rig.mocks.openai.enqueue({ kind: "text", chunks: ["Hi"], usage: { prompt_tokens: 5, completion_tokens: 1, cached_tokens: 2 } });
    const withUsage = await rig.gateway.openai.chat.completions.create({
      model: "gpt",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const usageChunks = [];
    for await (const chunk of withUsage) if (chunk.usage) usageChunks.push(chunk);
    expect(usageChunks).toHaveLength(1);
    expect(usageChunks[0]!.choices).toEqual([]);
    expect(usageChunks[0]!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 2 } });
  });

  it("frames the stream exactly: data events, [DONE], then tollgate's summary the SDK never reads", async () => {
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["A", "B"], usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const response = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const { events, summary, text } = await readSseStream(response);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    // [DONE] is the last event; the summary follows it as a comment line, which every SSE reader skips.
    expect(events.at(-1)!.data).toBe("[DONE]");
    expect(text.trimEnd().split("\n").at(-1)).toMatch(/^: tollgate \{/);
    expect(summary).toMatchObject({ route: "gpt", provider: "openai", model: "gpt-4o", inputTokens: 7, outputTokens: 2, cachedTokens: 0 });
    expect(summary!.requestId).toBe(response.headers.get("x-tollgate-request-id"));
    expect(summary!.ttftMs).toBeGreaterThan(0);
  });

  it("passes tool definitions and returns streamed tool calls the SDK accumulates", async () => {
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ id: "call_abc", name: "get_weather", arguments: '{"city":"Oslo","unit":"c"}' }] });
    const runner = rig.gateway.openai.chat.completions.stream({
      model: "gpt",
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      tool_choice: "auto",
    });
    const completion = await runner.finalChatCompletion();
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call && call.type === "function" ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : null).toEqual([
      "call_abc",
      "get_weather",
      { city: "Oslo", unit: "c" },
    ]);
    expect(rig.mocks.openai.requests[0]!.body).toMatchObject({ tools: [{ type: "function", function: { name: "get_weather" } }], tool_choice: "auto" });
  });
});

describe("OpenAI client → Anthropic provider", () => {
  it("converts system, multi-turn, tool results, stop and sampling, and maps the answer back", async () => {
    rig.mocks.anthropic.enqueue({
      kind: "text",
      text: "It is cold.",
      stopReason: "stop_sequence",
      stopSequence: "END",
      usage: { input_tokens: 30, output_tokens: 4, cache_read_input_tokens: 100, cache_creation_input_tokens: 50 },
    });
    const { data, response } = await rig.gateway.openai.chat.completions
      .create({
        model: "claude",
        messages: [
          { role: "system", content: "You are a weather bot." },
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
          { role: "tool", tool_call_id: "toolu_1", content: "-3C" },
        ],
        stop: ["END"],
        temperature: 0.5,
        top_p: 0.9,
        response_format: { type: "json_object" },
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("It is cold.");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    // OpenAI's prompt_tokens includes cache reads and writes; Anthropic's input_tokens does not.
    expect(data.usage).toMatchObject({ prompt_tokens: 180, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 100 } });
    expect(response.headers.get("x-tollgate-provider")).toBe("anthropic");

    const sent = rig.mocks.anthropic.requests[0]!;
    // @anthropic-ai/sdk 1.x sends the key as a Bearer token; older versions used x-api-key.
    expect(sent.headers.authorization ?? `Bearer ${sent.headers["x-api-key"]}`).toBe("Bearer sk-ant-test");
    expect(sent.body).toEqual({
      model: "claude-sonnet-4-6",
      max_tokens: 4096,
      system: [
        // The format instruction is the system prompt's first line (the format policy).
        { type: "text", text: "Respond with a single JSON object and nothing else.\nYou are a weather bot." },
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "-3C" }] },
      ],
      stop_sequences: ["END"],
      // top_p is not sent beside temperature: Sonnet 4.6 refuses the pair (the sampling guard).
      temperature: 0.5,
      stream: false,
    });
  });

  it("streams an Anthropic answer as OpenAI chunks, with usage and length finish", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", chunks: ["One", " two", " three"], stopReason: "max_tokens", usage: { input_tokens: 11, output_tokens: 3 } });
    const stream = await rig.gateway.openai.chat.completions.create({
      model: "claude",
      messages: [{ role: "user", content: "Count" }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("One two three");
    expect(finish).toBe("length");
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3 });
    expect(rig.mocks.anthropic.requests[0]!.body).toMatchObject({ max_tokens: 3, stream: true });
  });

  it("streams Anthropic tool_use as OpenAI tool_call deltas", async () => {
    rig.mocks.anthropic.enqueue({ kind: "tool-use", text: "Let me check.", blocks: [{ id: "toolu_9", name: "lookup", input: { q: "tollgate", n: 2 } }] });
    const completion = await rig.gateway.openai.chat.completions
      .stream({ model: "claude", messages: [{ role: "user", content: "Look it up" }], tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }], tool_choice: "required" })
      .finalChatCompletion();
    const message = completion.choices[0]!.message;
    expect(message.content).toBe("Let me check.");
    const call = message.tool_calls?.[0];
    expect(call?.id).toBe("toolu_9");
    expect(call && call.type === "function" ? JSON.parse(call.function.arguments) : null).toEqual({ q: "tollgate", n: 2 });
    expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
    expect(rig.mocks.anthropic.requests[0]!.body).toMatchObject({ tool_choice: { type: "any" }, tools: [{ name: "lookup", input_schema: { type: "object" } }] });
  });
});
