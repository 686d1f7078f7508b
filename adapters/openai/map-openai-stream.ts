import type OpenAI from "openai";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { isUnfinishedOpenAIReason } from "../../src/dialects/finish-reasons.ts";
import { convertOpenAIUsage, openAIUsageDetails } from "./convert-openai-usage.ts";
import { finishPart } from "./finish-part.ts";
import { answerIdentity } from "./map-openai-response.ts";
import { readDecoderReasoning } from "./read-decoder-reasoning.ts";
import { readDecoderTimings } from "./read-decoder-timings.ts";
import { toolCallIdOrNew } from "./tool-call-id.ts";

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
  const toolCalls = new Map<number, ToolCall>();
  const pending: ToolCall[] = [];
  let callsStarted = 0;
  // A call is started once its name is known: every field of a chunk's tool call is optional,
  // and a server may send the first arguments before the id and name (the openai SDK's own
  // accumulator takes each from whichever chunk has it). Its arguments wait until then.
  function* begin(call: ToolCall): Generator<StreamPart> {
    call.index = callsStarted++;
    pending.splice(pending.indexOf(call), 1);
    yield { type: "tool-call-start", index: call.index, id: toolCallIdOrNew(call.id), name: call.name ?? "" };
    if (call.waiting) yield { type: "tool-call-delta", index: call.index, argumentsDelta: call.waiting };
    call.waiting = "";
  }
  function* beginPending(): Generator<StreamPart> {
    while (pending[0]) yield* begin(pending[0]);
  }
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      // Never undefined: the renderers write them into JSON (a server that leaves them out exists).
      yield { type: "start", id: typeof chunk.id === "string" ? chunk.id : "", model: typeof chunk.model === "string" ? chunk.model : "", ...answerIdentity(chunk) };
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    const reasoning = readDecoderReasoning(delta);
    if (reasoning) yield { type: "reasoning-delta", text: reasoning };
    if (delta?.content) {
      const logprobs = choice?.logprobs?.content;
      yield logprobs ? { type: "text-delta", text: delta.content, logprobs } : { type: "text-delta", text: delta.content };
    }
    if (delta?.refusal) {
      const logprobs = choice?.logprobs?.refusal;
      yield logprobs ? { type: "text-delta", text: delta.refusal, refusal: true, logprobs } : { type: "text-delta", text: delta.refusal, refusal: true };
    }
    // A search model's citations, in a delta of their own near the end (the SDK's chunk type
    // does not declare them; its stream helper keeps them on the final message).
    const annotations = (delta as { annotations?: unknown } | undefined)?.annotations;
    if (Array.isArray(annotations) && annotations.length > 0) yield { type: "annotations", annotations };
    for (const call of delta?.tool_calls ?? []) {
      let current = toolCalls.get(call.index);
      if (current?.id !== undefined && call.id && call.id !== current.id) {
        if (current.index === undefined) yield* begin(current); // it never got a name
        current = undefined;
      }
      if (!current) {
        current = { upstreamIndex: call.index, waiting: "" };
        toolCalls.set(call.index, current);
        pending.push(current);
      }
      current.id ??= call.id ?? undefined;
      current.name ??= call.function?.name || undefined;
      const args = call.function?.arguments ?? "";
      if (current.index !== undefined) {
        if (args) yield { type: "tool-call-delta", index: current.index, argumentsDelta: args };
      } else {
        current.waiting += args;
        if (current.name !== undefined) yield* begin(current);
      }
    }
    // An answer cut short (vLLM's "abort") has no finish: the adapter's FinishCheck reports it, after
    // the usage that may still follow, so the tokens that came are billed.
    if (choice?.finish_reason && !isUnfinishedOpenAIReason(choice.finish_reason)) {
      yield* beginPending();
      yield finishPart(choice, stop);
    }
    if (chunk.usage) {
      const details = openAIUsageDetails(chunk.usage);
      yield details ? { type: "usage", usage: convertOpenAIUsage(chunk.usage), openAIDetails: details } : { type: "usage", usage: convertOpenAIUsage(chunk.usage) };
    }
    const timings = readDecoderTimings(chunk);
    if (timings) yield { type: "decoder-timings", timings };
  }
  yield* beginPending();
}

type ToolCall = {
  upstreamIndex: number;
  /** Its index among the calls given to the client, once started. */
  index?: number;
  id?: string;
  name?: string;
  /** Arguments that came before its name. */
  waiting: string;
};
