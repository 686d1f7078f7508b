import type { ChatModel } from "../model/chat-model.ts";
import { foundNoCountEndpoint, mayAskToCount } from "../model/count-endpoint-memory.ts";
import type { ChatRequest } from "../model/chat-request.ts";

// A local decoder's call cut before its usage chunk (the client left, the decoder died) still
// read the whole prompt, and is priced per token or GPU-hour. tollgate's own count (o200k and
// OpenAI's message framing) is another model's vocabulary and template: 1,207 tokens billed where
// llama-server read 1,822, "hi" 7 where it read 24. So such a record asks the decoder for its own
// count, as count_tokens does (adapters/openai-compatible/count-tokens.ts: llama-server's
// /apply-template and /tokenize; vLLM, SGLang and Ollama answer "no-endpoint"), and counts for
// itself only where the decoder gives none. The question is asked once the client has the answer's
// end (its last byte, or a failed stream's error event, whose summary and close then wait for it)
// or has left, so it never delays content; it is bounded by PROMPT_COUNT_TIMEOUT_MS, below the
// 2 s a stopping server waits for its last records, because a decoder that died mid-answer is one
// of the cases.

/** How long a record waits for the decoder's count before counting for itself. */
export const PROMPT_COUNT_TIMEOUT_MS = 1_000;

/** The decoder's own count of the prompt it was sent; undefined where it gives none. Never throws. */
export type DecoderPromptCount = () => Promise<number | undefined>;

/**
 * How to ask the decoder behind `model` for the prompt tokens of `request` (the request as sent to
 * it, after the per-target policies), or undefined for a provider that is not a local decoder.
 * Cloud providers always report a prompt's usage before its answer, or bill nothing.
 */
export function decoderPromptCount(model: ChatModel, modelName: string, request: ChatRequest, now: () => number = Date.now): DecoderPromptCount | undefined {
  if (model.providerType !== "openai-compatible" || !model.countTokens) return undefined;
  return async () => {
    if (!mayAskToCount(model, now())) return undefined;
    try {
      // A signal of its own: the request's was aborted when its client left.
      const counted = await model.countTokens!(request, modelName, AbortSignal.timeout(PROMPT_COUNT_TIMEOUT_MS));
      if (counted === "no-endpoint") foundNoCountEndpoint(model, now());
      return typeof counted === "number" ? counted : undefined;
    } catch {
      return undefined; // gone, busy past the timeout, or refusing: tollgate counts instead
    }
  };
}

export const PROMPT_COUNTED_BY_DECODER =
  "input tokens are the decoder's own count of the prompt (its chat template and tokenizer), asked after the call was cut before its usage; any output is tollgate's estimate";
