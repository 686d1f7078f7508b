import type { ChatModel } from "./chat-model.ts";

// A local decoder without a count endpoint (vLLM, SGLang, Ollama: only llama-server has one) says
// so when asked ("no-endpoint"). count_tokens and a cut call's record both ask; either finding it
// out spares the other the question for a while.

/** How long a provider found without a count endpoint is not asked again: it may be upgraded meanwhile. */
export const NO_COUNT_RETRY_MS = 10 * 60_000;

/** Providers that answered "no-endpoint", and until when they are not asked. */
const cannotCount = new WeakMap<ChatModel, number>();

/** Whether `model` may be asked for a count now. */
export function mayAskToCount(model: ChatModel, now: number): boolean {
  return model.countTokens !== undefined && now >= (cannotCount.get(model) ?? 0);
}

/** `model` answered that it has no count endpoint. */
export function foundNoCountEndpoint(model: ChatModel, now: number): void {
  cannotCount.set(model, now + NO_COUNT_RETRY_MS);
}
