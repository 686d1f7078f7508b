import type { GatewayError } from "../errors/gateway-error.ts";
import type { Usage } from "./usage.ts";

// What every adapter's stream yields and every dialect renderer consumes. Errors are parts, not
// throws, so a renderer can always close the client's stream in the client's own dialect.

export type FinishReason =
  | "stop"
  | "stop-sequence"
  | "length"
  /** The model's context window filled up before its max_tokens did (Anthropic's model_context_window_exceeded). */
  | "context-window"
  | "tool-calls"
  | "content-filter"
  | "other";

export type StreamPart =
  /**
   * `inferenceGeo`: where the provider says inference ran (Anthropic's usage.inference_geo), which
   * can change the price. `systemFingerprint`, `serviceTier`: OpenAI's, passed on to OpenAI clients.
   * `anthropicServiceTier`: Anthropic's usage.service_tier, passed on to Anthropic clients.
   */
  | ({ type: "start"; id: string; model: string; inferenceGeo?: string } & OpenAIAnswerIdentity & AnthropicAnswerIdentity)
  /**
   * Answer text. `refusal`: OpenAI's refusal (structured outputs), which OpenAI clients read from
   * `refusal` rather than `content`; every other consumer treats it as text.
   */
  | {
      type: "text-delta";
      text: string;
      refusal?: true;
      /** The first text of a text block that follows another of the same answer (Claude may answer in several): renderers that keep blocks start a new one. */
      newBlock?: true;
      /** The log probabilities of this text's tokens (a refusal's, with `refusal`), where the request asked for them. */
      logprobs?: TokenLogprob[];
    }
  /**
   * The model's thinking, streamed before its answer by local decoders (llama-server's
   * `reasoning_content`, vLLM's and Ollama's `reasoning`) and Claude. Output the model generated
   * and bills (as reasoning tokens), and a sign of life for the stream's deadlines. `signed`:
   * Claude's thinking block, which a `reasoning-signature` closes.
   */
  | { type: "reasoning-delta"; text: string; signed?: true }
  /** The signature that ends one of Claude's thinking blocks (alone when its text is not displayed). */
  | { type: "reasoning-signature"; signature: string }
  /** A block of Claude's thinking that Anthropic encrypted, as it must be sent back. */
  | { type: "redacted-reasoning"; data: string }
  /** A tool call begins; `index` orders calls within the answer. */
  | { type: "tool-call-start"; index: number; id: string; name: string }
  | { type: "tool-call-delta"; index: number; argumentsDelta: string }
  /** `openAIDetails`: OpenAI's usage counts beyond the billed ones, for OpenAI clients. */
  | { type: "usage"; usage: Usage; openAIDetails?: OpenAIUsageDetails }
  /**
   * OpenAI's annotations of the answer's text (a search model's `url_citation`s), as it sent
   * them: OpenAI clients get them; Anthropic's answer has no place for them.
   */
  | { type: "annotations"; annotations: OpenAIAnnotation[] }
  /**
   * `refusalDetails`: why Claude refused (its `stop_details`), where it said. `contextManagement`:
   * what Anthropic's context editing did, as message_delta said.
   */
  | { type: "finish"; reason: FinishReason; stopSequence?: string; refusalDetails?: RefusalDetails; contextManagement?: Record<string, unknown> }
  /** Server-side timings a local decoder reports (llama-server's `timings`). */
  | { type: "decoder-timings"; timings: DecoderTimings }
  | { type: "error"; error: GatewayError };

/**
 * What OpenAI says of the backend that answered: `system_fingerprint` (watched with `seed`) and
 * `service_tier`; and `created`, when it made the answer (Unix seconds).
 */
export type OpenAIAnswerIdentity = { systemFingerprint?: string; serviceTier?: string; created?: number };

/**
 * The tier Anthropic served the call at ("standard", "priority", "batch": its usage.service_tier),
 * which apps on Priority Tier read to see their commitment drawn down. Kept apart from OpenAI's
 * `serviceTier`, which prices the record: Claude's is passed on, not priced.
 */
export type AnthropicAnswerIdentity = { anthropicServiceTier?: string };

/**
 * The counts of OpenAI's `prompt_tokens_details` and `completion_tokens_details` that the neutral
 * Usage has no field for (Predicted Outputs' `accepted_prediction_tokens` and
 * `rejected_prediction_tokens`, `audio_tokens`), as OpenAI sent them: passed back to OpenAI
 * clients, never billed from (`cached_tokens` and `reasoning_tokens` are in Usage, and billed).
 */
export type OpenAIUsageDetails = { prompt_tokens_details?: Record<string, number>; completion_tokens_details?: Record<string, number> };

/** One of OpenAI's message annotations, `{type: "url_citation", url_citation: {url, title, start_index, end_index}}`, as sent. */
export type OpenAIAnnotation = Record<string, unknown>;

/** Claude's `stop_details` of a refusal: the policy category and a human-readable explanation. */
export type RefusalDetails = { category: string | null; explanation: string | null };

/**
 * One output token's log probability and, where asked for, its most likely alternatives: in
 * OpenAI's shape (`ChatCompletionTokenLogprob`), the only one any provider gives (OpenAI, vLLM,
 * llama-server); Claude gives none.
 */
export type TokenLogprob = {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
};

export type DecoderTimings = {
  promptTokens: number;
  promptMs: number;
  generatedTokens: number;
  generationMs: number;
  /** Prompt tokens served from the decoder's KV/prefix cache. */
  cachedTokens?: number;
};

const PREAMBLE_TYPES: ReadonlySet<StreamPart["type"]> = new Set(["start", "usage", "decoder-timings"]);

/**
 * Parts that carry no answer yet (Anthropic's message_start with its usage, OpenAI's role chunk):
 * a stream that fails after them has given the client nothing, so it may still fall back, and
 * they do not start the clock of the silence allowed between two parts of an answer.
 */
export function isPreamble(part: StreamPart): boolean {
  return PREAMBLE_TYPES.has(part.type);
}
