import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { mapOpenAIStream } from "../../adapters/openai/map-openai-stream.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";

// Ollama's /v1/chat/completions streams every parallel tool call with `index: 0` (each with its own
// id and name): ollama/ollama#15457, still open for models on the legacy parser (#15497); handled
// upstream by vercel/ai#14277 ("a different id at an occupied index is a new call"). Ollama is one
// of the local decoders the openai-compatible adapter serves (PRODUCT.md), and it shares
// mapOpenAIStream. Folded together, the two calls would be one call named "file_write" with
// arguments '{"filePath":"hello.py"}{"filePath":"world.py"}', and call_2 would vanish.

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

const chunk = (delta: object, finish: string | null = null) =>
  ({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "qwen2.5-coder:7b", choices: [{ index: 0, delta, finish_reason: finish }] }) as unknown as OpenAI.Chat.Completions.ChatCompletionChunk;

describe("mapOpenAIStream with a server that reuses tool-call index 0", () => {
  it("keeps two tool calls apart when their ids differ", async () => {
    const parts: StreamPart[] = [];
    const chunks = [
      chunk({ role: "assistant", content: "" }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "file_write", arguments: '{"filePath":"hello.py"}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: "call_2", type: "function", function: { name: "file_write", arguments: '{"filePath":"world.py"}' } }] }),
      chunk({}, "tool_calls"),
    ];
    for await (const part of mapOpenAIStream(replay(chunks))) parts.push(part);
    const starts = parts.filter((part) => part.type === "tool-call-start");
    expect(starts).toEqual([
      { type: "tool-call-start", index: 0, id: "call_1", name: "file_write" },
      { type: "tool-call-start", index: 1, id: "call_2", name: "file_write" },
    ]);
    const deltas = parts.filter((part) => part.type === "tool-call-delta");
    expect(deltas).toEqual([
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"filePath":"hello.py"}' },
      { type: "tool-call-delta", index: 1, argumentsDelta: '{"filePath":"world.py"}' },
    ]);
  });
});

// Every field of a chunk's tool call is optional (openai v6 ChatCompletionChunk.Choice.Delta.ToolCall),
// and the openai SDK's accumulator takes the id and the name from whichever chunk has them. A call
// whose first chunk had only arguments was started as "call_0" with no name, and the chunk that
// then brought its id made a second call.
describe("mapOpenAIStream with a tool call's id and name after its first arguments", () => {
  const collect = async (chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]) => {
    const parts: StreamPart[] = [];
    for await (const part of mapOpenAIStream(replay(chunks))) parts.push(part);
    return parts.filter((part) => part.type === "tool-call-start" || part.type === "tool-call-delta");
  };

  it("id and name in the second chunk: one call, started when its name is known, its first arguments kept", async () => {
    expect(
      await collect([
        chunk({ tool_calls: [{ index: 0, type: "function", function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, id: "call_late", function: { name: "weather", arguments: '"Oslo"}' } }] }),
        chunk({}, "tool_calls"),
      ]),
    ).toEqual([
      { type: "tool-call-start", index: 0, id: "call_late", name: "weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":"Oslo"}' },
    ]);
  });

  it("the id first and the name in the second chunk: one call with its name", async () => {
    expect(
      await collect([
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { name: "weather", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
      ]),
    ).toEqual([
      { type: "tool-call-start", index: 0, id: "call_1", name: "weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: "{}" },
    ]);
  });

  it("a name that never comes: the call is still given before the finish, with its arguments", async () => {
    const parts: StreamPart[] = [];
    for await (const part of mapOpenAIStream(replay([chunk({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }), chunk({}, "tool_calls")]))) parts.push(part);
    expect(parts.map((part) => part.type)).toEqual(["start", "tool-call-start", "tool-call-delta", "finish"]);
  });
});

describe("mapOpenAIStream with chunks that have no id or model", () => {
  it("starts with empty strings, never undefined (the renderers write them into JSON)", async () => {
    const bare = { object: "chat.completion.chunk", created: 1, choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] } as unknown as OpenAI.Chat.Completions.ChatCompletionChunk;
    const parts: StreamPart[] = [];
    for await (const part of mapOpenAIStream(replay([bare]))) parts.push(part);
    expect(parts[0]).toEqual({ type: "start", id: "", model: "", created: 1 });
  });
});
