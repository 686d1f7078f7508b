import type { StreamPart } from "../../src/model/stream-part.ts";
import { fromOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";

/**
 * The finish, and the stop sequence that caused it where the server says: vLLM's choices carry
 * `stop_reason`, the stop string (or a stop token's id) that ended the answer. Anthropic clients
 * get it as stop_reason "stop_sequence" with the sequence; OpenAI clients see "stop" as before.
 */
export function finishPart(choice: { finish_reason: string | null }): Extract<StreamPart, { type: "finish" }> {
  const stopSequence = (choice as { stop_reason?: unknown }).stop_reason;
  if (choice.finish_reason === "stop" && typeof stopSequence === "string" && stopSequence !== "") return { type: "finish", reason: "stop-sequence", stopSequence };
  return { type: "finish", reason: fromOpenAIFinishReason(choice.finish_reason) };
}
