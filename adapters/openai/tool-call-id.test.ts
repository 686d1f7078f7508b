import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { mapOpenAIResponse } from "./map-openai-response.ts";
import { mapOpenAIStream } from "./map-openai-stream.ts";

// A decoder that sends a tool call without an id (or with ""). Was: `call_0` for the first call
// of every answer, so two turns of one conversation had calls with the same id, and Claude, to
// which a route may send that conversation, refuses repeated tool_use ids. A non-streamed answer
// passed the missing id on as it was.

const chunk = (delta: object, finish: string | null = null) =>
  ({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "tiny-local", choices: [{ index: 0, delta, finish_reason: finish }] }) as unknown as OpenAI.Chat.Completions.ChatCompletionChunk;

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

async function streamedCallId(id: string | undefined): Promise<string> {
  const parts: StreamPart[] = [];
  const call = { index: 0, ...(id === undefined ? {} : { id }), type: "function", function: { name: "weather", arguments: "{}" } };
  for await (const part of mapOpenAIStream(replay([chunk({ role: "assistant", tool_calls: [call] }), chunk({}, "tool_calls")]))) parts.push(part);
  return (parts.find((part) => part.type === "tool-call-start") as { id: string }).id;
}

describe("a tool call without an id", () => {
  it("gets a new id of its own in every streamed answer", async () => {
    const ids = [await streamedCallId(undefined), await streamedCallId(undefined), await streamedCallId("")];
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(3);
    expect(await streamedCallId("call_abc")).toBe("call_abc");
  });

  it("gets one in a non-streamed answer too", () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "tiny-local",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "weather", arguments: "{}" } }] }, finish_reason: "tool_calls" }],
    } as unknown as OpenAI.Chat.Completions.ChatCompletion;
    const call = mapOpenAIResponse(completion, "local").content.find((part) => part.type === "tool-call") as { id: string };
    expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);
  });
});
