import type OpenAI from "openai";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { fromOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";
import { convertOpenAIUsage } from "./convert-openai-usage.ts";
import { readDecoderTimings } from "./read-decoder-timings.ts";

/**
 * Chat Completions chunks → stream parts. The usage chunk comes after the finish chunk with
 * `choices: []` (and some servers put usage on a chunk that still has choices: read it wherever
 * it is, never drop it).
 */
export async function* mapOpenAIStream(chunks: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): AsyncGenerator<StreamPart> {
  let started = false;
  const startedToolCalls = new Set<number>();
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield { type: "start", id: chunk.id, model: chunk.model };
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta?.content) yield { type: "text-delta", text: delta.content };
    for (const call of delta?.tool_calls ?? []) {
      if (!startedToolCalls.has(call.index)) {
        startedToolCalls.add(call.index);
        yield { type: "tool-call-start", index: call.index, id: call.id ?? `call_${call.index}`, name: call.function?.name ?? "" };
      }
      if (call.function?.arguments) yield { type: "tool-call-delta", index: call.index, argumentsDelta: call.function.arguments };
    }
    if (choice?.finish_reason) yield { type: "finish", reason: fromOpenAIFinishReason(choice.finish_reason) };
    if (chunk.usage) yield { type: "usage", usage: convertOpenAIUsage(chunk.usage) };
    const timings = readDecoderTimings(chunk);
    if (timings) yield { type: "decoder-timings", timings };
  }
}
