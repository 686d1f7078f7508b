import type OpenAI from "openai";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { isUnfinishedOpenAIReason } from "../../src/dialects/finish-reasons.ts";
import { convertOpenAIUsage } from "./convert-openai-usage.ts";
import { finishPart } from "./finish-part.ts";
import { readDecoderReasoning } from "./read-decoder-reasoning.ts";
import { readDecoderTimings } from "./read-decoder-timings.ts";

/**
 * Chat Completions chunks → stream parts. The usage chunk comes after the finish chunk with
 * `choices: []` (and some servers put usage on a chunk that still has choices: read it wherever
 * it is, never drop it).
 */
export async function* mapOpenAIStream(chunks: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>, stop?: readonly string[]): AsyncGenerator<StreamPart> {
  let started = false;
  // Upstream tool-call index → the call it currently means. Ollama streams parallel calls all at
  // index 0, each with its own id (ollama/ollama#15457): a new id at an index in use is a new call,
  // numbered after the others, or its arguments would be appended to the previous call's.
  const toolCalls = new Map<number, { id: string; index: number }>();
  let callsStarted = 0;
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield { type: "start", id: chunk.id, model: chunk.model };
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    const reasoning = readDecoderReasoning(delta);
    if (reasoning) yield { type: "reasoning-delta", text: reasoning };
    if (delta?.content) yield { type: "text-delta", text: delta.content };
    if (delta?.refusal) yield { type: "text-delta", text: delta.refusal, refusal: true };
    for (const call of delta?.tool_calls ?? []) {
      let current = toolCalls.get(call.index);
      if (!current || (call.id && call.id !== current.id)) {
        current = { id: call.id ?? `call_${call.index}`, index: callsStarted++ };
        toolCalls.set(call.index, current);
        yield { type: "tool-call-start", index: current.index, id: current.id, name: call.function?.name ?? "" };
      }
      if (call.function?.arguments) yield { type: "tool-call-delta", index: current.index, argumentsDelta: call.function.arguments };
    }
    // An answer cut short (vLLM's "abort") has no finish: the adapter's FinishCheck reports it, after
    // the usage that may still follow, so the tokens that came are billed.
    if (choice?.finish_reason && !isUnfinishedOpenAIReason(choice.finish_reason)) yield finishPart(choice, stop);
    if (chunk.usage) yield { type: "usage", usage: convertOpenAIUsage(chunk.usage) };
    const timings = readDecoderTimings(chunk);
    if (timings) yield { type: "decoder-timings", timings };
  }
}
