import type { StreamPart } from "../../src/model/stream-part.ts";
import { fromOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";

/**
 * The finish, and the stop sequence that caused it where the server says: vLLM's choices carry
 * `stop_reason`, SGLang's `matched_stop`, the stop string (or a stop token's id: EOS is a
 * number there, not a stop sequence) that ended the answer. Anthropic clients get it as
 * stop_reason "stop_sequence" with the sequence; OpenAI clients see "stop" as before.
 *
 * Only a sequence the request sent (`sent`: its stop list after the policies) counts: SGLang
 * serving a named chat template adds the template's own stop strings (`<|im_end|>`) to every
 * request, and reports them for an answer that simply ended.
 */
export function finishPart(choice: { finish_reason: string | null }, sent: readonly string[] = []): Extract<StreamPart, { type: "finish" }> {
  const { stop_reason: vllm, matched_stop: sglang } = choice as { stop_reason?: unknown; matched_stop?: unknown };
  const matched = [vllm, sglang].find((value): value is string => typeof value === "string" && sent.includes(value));
  if (choice.finish_reason === "stop" && matched !== undefined) return { type: "finish", reason: "stop-sequence", stopSequence: matched };
  return { type: "finish", reason: fromOpenAIFinishReason(choice.finish_reason) };
}
