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
