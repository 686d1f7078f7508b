import { describe, expect, it } from "vitest";
import type { StreamPart } from "../../model/stream-part.ts";
import { OpenAIStreamRenderer } from "./render-openai-stream.ts";

// The renderer serializes the unchanging part of a chunk once per stream; every chunk must still
// be exactly what JSON.stringify of the whole chunk gives, in OpenAI's key order.

const parts: StreamPart[] = [
  { type: "start", id: 'chatcmpl-"quoted"\\id', model: "gpt-4o-2024-08-06" },
  { type: "text-delta", text: "Hello" },
  { type: "text-delta", text: 'line\nbreak, "quotes", \\ backslash, \u2028, emoji 🎉, \u0000' },
  { type: "tool-call-start", index: 0, id: "call_1", name: "get_weather" },
  { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":' },
  { type: "finish", reason: "tool-calls" },
];

function expected(includeUsage: boolean, created: number): string[] {
  const chunk = (delta: unknown, finishReason: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-"quoted"\\id',
      object: "chat.completion.chunk",
      created,
      model: "gpt-4o-2024-08-06",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;
  return [
    chunk({ role: "assistant", content: "" }, null),
    chunk({ content: "Hello" }, null),
    chunk({ content: 'line\nbreak, "quotes", \\ backslash, \u2028, emoji 🎉, \u0000' }, null),
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }, null),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null),
    chunk({}, "tool_calls"),
  ];
}

describe("OpenAIStreamRenderer", () => {
  it.each([false, true])("renders each chunk byte for byte as the whole chunk serialized (include_usage %s)", (includeUsage) => {
    const renderer = new OpenAIStreamRenderer(includeUsage);
    const rendered = parts.map((part) => renderer.render(part));
    const created = JSON.parse(rendered[0]!.slice("data: ".length)).created as number;
    expect(rendered).toEqual(expected(includeUsage, created));
    for (const text of rendered) expect(() => JSON.parse(text.slice("data: ".length))).not.toThrow();
  });
});
