import { readFileSync } from "node:fs";
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { mergeUsage, type Usage } from "../../src/model/usage.ts";
import { mapAnthropicStream } from "./map-anthropic-stream.ts";

const fixture = (name: string): Anthropic.Messages.RawMessageStreamEvent[] =>
  JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8"));

async function* replay<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe("mapAnthropicStream", () => {
  it("passes thinking on as signed reasoning, numbers tool calls apart from block indexes, and keeps cumulative usage", async () => {
    const parts = [];
    for await (const part of mapAnthropicStream(replay(fixture("thinking-then-tool-use.events.json")))) parts.push(part);
    expect(parts.filter((part) => part.type !== "usage")).toEqual([
      { type: "start", id: "msg_01X", model: "claude-sonnet-4-6" },
      { type: "reasoning-delta", text: "The user wants the weather.", signed: true },
      { type: "reasoning-signature", signature: "EqQBCgIYAhIM" },
      { type: "text-delta", text: "Checking." },
      { type: "tool-call-start", index: 0, id: "toolu_01A", name: "weather" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city": "Os' },
      { type: "tool-call-delta", index: 0, argumentsDelta: 'lo"}' },
      { type: "finish", reason: "tool-calls" },
    ]);
    // message_start's placeholder output (1) and message_delta's cumulative total (57) merge to 57.
    // The 2,048-token write is a 1-hour write (message_start's split); message_delta repeats the
    // total without the split, and must not turn it into a second, 5-minute write.
    let usage: Usage | undefined;
    for (const part of parts) if (part.type === "usage") usage = mergeUsage(usage, part.usage);
    expect(usage).toEqual({ inputTokens: 12, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 2048, outputTokens: 57 });
  });
});

describe("mapAnthropicStream with an answer in several text blocks", () => {
  // Claude may answer in several text blocks. Streamed, they were joined into one, with no
  // separator ("First paragraph.Second paragraph."), where the same answer not streamed kept two.
  it("marks the first text of each text block after the first, so the blocks stay apart", async () => {
    const usage = { input_tokens: 5, output_tokens: 1 };
    const events = [
      { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [], stop_reason: null, stop_sequence: null, usage } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "First " } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "paragraph." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Second paragraph." } },
      { type: "content_block_stop", index: 1 },
    ] as unknown as Anthropic.Messages.RawMessageStreamEvent[];
    const texts = [];
    for await (const part of mapAnthropicStream(replay(events))) if (part.type === "text-delta") texts.push(part);
    expect(texts).toEqual([
      { type: "text-delta", text: "First " },
      { type: "text-delta", text: "paragraph." },
      { type: "text-delta", text: "Second paragraph.", newBlock: true },
    ]);
  });
});
