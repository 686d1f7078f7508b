import type { StreamPart } from "../../src/model/stream-part.ts";
import { fromOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";

/**
 * The finish, and the stop sequence that caused it where the server says: vLLM's choices carry
 * `stop_reason`, SGLang's `matched_stop`, the stop string (or a stop token's id: EOS is a
 * number there, not a stop sequence) that ended the answer. Anthropic clients get it as
 * stop_reason "stop_sequence" with the sequence; OpenAI clients see "stop" as before.
 */
export function finishPart(choice: { finish_reason: string | null }): Extract<StreamPart, { type: "finish" }> {
  const { stop_reason: vllm, matched_stop: sglang } = choice as { stop_reason?: unknown; matched_stop?: unknown };
  const stopSequence = typeof vllm === "string" && vllm !== "" ? vllm : typeof sglang === "string" && sglang !== "" ? sglang : undefined;
  if (choice.finish_reason === "stop" && stopSequence !== undefined) return { type: "finish", reason: "stop-sequence", stopSequence };
  return { type: "finish", reason: fromOpenAIFinishReason(choice.finish_reason) };
}
