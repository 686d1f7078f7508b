// Builders for the exact JSON the Anthropic Messages API sends, in the key order of captured
// responses (api.anthropic.com, 2025-2026; @anthropic-ai/sdk 1.x types): the Message object,
// the named SSE events of a stream, and `{"type":"error",...}` bodies.

import { randomString } from "./mock-support.ts";

/** Token counts a test can script. `input_tokens` EXCLUDES cache reads and writes, as on the real API. */
export interface AnthropicUsageInput {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** Split of cache writes by TTL; default: all of cache_creation_input_tokens as 5-minute writes. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Where inference ran, as usage reports it; default "global" (the request's `inference_geo` where it set one). */
  inference_geo?: string;
  /** The tier that served the call ("standard", "priority", "batch"); default "standard". */
  service_tier?: string;
  /** How many of output_tokens were thinking; sent only when given (as on answers that thought). */
  output_tokens_details?: { thinking_tokens: number };
}

export interface AnthropicToolUse {
  /** `toolu_…`; generated when omitted. */
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

/** How an answer stopped; `details`: a refusal's `stop_details` (every other stop has null). */
export type AnthropicStop = {
  reason: AnthropicStopReason;
  sequence: string | null;
  details?: { category: string | null; explanation: string | null };
  /** Context editing's report (its beta): on the Message, and at the top of message_delta. */
  contextManagement?: Record<string, unknown>;
};

const stopDetails = (stop: AnthropicStop) => (stop.details ? { type: "refusal", ...stop.details } : null);

// Anthropic ids are base58-ish after a fixed "01" prefix: msg_01…, toolu_01…, req_011C….
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
export const newMessageId = () => `msg_01${randomString(22, BASE58)}`;
export const newToolUseId = () => `toolu_01${randomString(22, BASE58)}`;
export const newAnthropicRequestId = () => `req_011C${randomString(20, BASE58)}`;

/** The full usage object of a Message (and of `message_start`, where output_tokens is a placeholder). */
export function buildUsage(input: AnthropicUsageInput) {
  const cacheWrites = input.cache_creation_input_tokens ?? 0;
  return {
    input_tokens: input.input_tokens,
    cache_creation_input_tokens: cacheWrites,
    cache_read_input_tokens: input.cache_read_input_tokens ?? 0,
    cache_creation: input.cache_creation ?? { ephemeral_5m_input_tokens: cacheWrites, ephemeral_1h_input_tokens: 0 },
    output_tokens: input.output_tokens,
    ...(input.output_tokens_details ? { output_tokens_details: input.output_tokens_details } : {}),
    service_tier: input.service_tier ?? "standard",
    inference_geo: input.inference_geo ?? "global",
  };
}

/**
 * `message_delta` usage: cumulative totals, with the input and cache counters repeated but WITHOUT
 * the `cache_creation` breakdown, `service_tier` or `inference_geo` (as captured from the real API).
 */
export function buildDeltaUsage(input: AnthropicUsageInput) {
  return {
    input_tokens: input.input_tokens,
    cache_creation_input_tokens: input.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: input.cache_read_input_tokens ?? 0,
    output_tokens: input.output_tokens,
    ...(input.output_tokens_details ? { output_tokens_details: input.output_tokens_details } : {}),
  };
}

export type AnthropicContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** The non-streaming Message object (the real API starts it with `model`). */
export function buildMessage(
  identity: { id: string; model: string },
  content: AnthropicContentBlock[],
  stop: AnthropicStop,
  usage: AnthropicUsageInput,
) {
  return {
    model: identity.model,
    id: identity.id,
    type: "message",
    role: "assistant",
    content,
    stop_reason: stop.reason,
    stop_sequence: stop.sequence,
    stop_details: stopDetails(stop),
    usage: buildUsage(usage),
    ...(stop.contextManagement ? { context_management: stop.contextManagement } : {}),
  };
}

// ---- streaming ----

/**
 * One SSE frame: `event: NAME`, `data: JSON`, blank line. The real API pads most frames with spaces
 * before the final `}` (cosmetic, varies per frame; still valid JSON), so `pad` adds that too:
 * a gateway must parse frames as JSON, never match them byte for byte.
 */
export function sseEvent(name: string, payload: unknown, pad = 0): string {
  const json = JSON.stringify(payload);
  return `event: ${name}\ndata: ${json.slice(0, -1)}${" ".repeat(pad)}}\n\n`;
}

/** The ping frame exactly as sent, space after the colon included. */
export const PING_FRAME = 'event: ping\ndata: {"type": "ping"}\n\n';

/** Deterministic stand-in for the real API's varying frame padding. */
export function framePadding(): () => number {
  const lengths = [7, 1, 5, 13, 0, 3, 9, 2];
  let at = 0;
  return () => lengths[at++ % lengths.length] ?? 0;
}

export function messageStartEvent(identity: { id: string; model: string }, usage: AnthropicUsageInput) {
  return {
    type: "message_start",
    message: {
      model: identity.model,
      id: identity.id,
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      // output_tokens is a placeholder here; message_delta carries the real, cumulative count.
      usage: buildUsage({ ...usage, output_tokens: 1 }),
    },
  };
}

/** A block as `content_block_start` announces it: empty text, or a tool_use with `input: {}`. */
export function contentBlockStartEvent(index: number, block: AnthropicContentBlock) {
  // Each block opens empty and fills through deltas, except redacted thinking, which comes whole.
  const opening = {
    text: () => ({ type: "text", text: "" }),
    tool_use: () => ({ type: "tool_use", id: (block as { id: string }).id, name: (block as { name: string }).name, input: {} }),
    thinking: () => ({ type: "thinking", thinking: "", signature: "" }),
    redacted_thinking: () => block,
  }[block.type]();
  return { type: "content_block_start", index, content_block: opening };
}

export function thinkingDeltaEvent(index: number, thinking: string) {
  return { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } };
}

/** The signature closes a thinking block, after its last thinking_delta. */
export function signatureDeltaEvent(index: number, signature: string) {
  return { type: "content_block_delta", index, delta: { type: "signature_delta", signature } };
}

export function textDeltaEvent(index: number, text: string) {
  return { type: "content_block_delta", index, delta: { type: "text_delta", text } };
}

export function inputJsonDeltaEvent(index: number, partialJson: string) {
  return { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partialJson } };
}

export function contentBlockStopEvent(index: number) {
  return { type: "content_block_stop", index };
}

export function messageDeltaEvent(stop: AnthropicStop, usage: AnthropicUsageInput) {
  return {
    type: "message_delta",
    delta: { stop_reason: stop.reason, stop_sequence: stop.sequence, stop_details: stopDetails(stop) },
    usage: buildDeltaUsage(usage),
    ...(stop.contextManagement ? { context_management: stop.contextManagement } : {}),
  };
}

export const MESSAGE_STOP_EVENT = { type: "message_stop" } as const;

// ---- errors ----

/** HTTP error body. */
export function anthropicErrorBody(type: string, message: string, requestId: string) {
  return { type: "error", error: { type, message }, request_id: requestId };
}

/** The `event: error` payload sent inside an HTTP 200 stream; it carries `details: null` first. */
export function streamErrorBody(type: string, message: string, requestId: string) {
  return { type: "error", error: { details: null, type, message }, request_id: requestId };
}

/** Default error type and message per status, as Anthropic words them. */
export function defaultAnthropicError(status: number): { type: string; message: string } {
  switch (status) {
    case 400: return { type: "invalid_request_error", message: "Invalid request." };
    case 401: return { type: "authentication_error", message: "invalid x-api-key" };
    case 402: return { type: "billing_error", message: "Your credit balance is too low to access the Anthropic API." };
    case 403: return { type: "permission_error", message: "Your API key does not have permission to use the specified resource." };
    case 404: return { type: "not_found_error", message: "Not found" };
    case 413: return { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." };
    case 429: return {
      type: "rate_limit_error",
      message: "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
    };
    case 504: return { type: "timeout_error", message: "Request timed out" };
    case 529: return { type: "overloaded_error", message: "Overloaded" };
    default: return { type: "api_error", message: "Internal server error" };
  }
}

/**
 * Anthropic's refusals of `metadata.user_id`: one that looks like an email (its message, as
 * captured: BerriAI/litellm#10106) and one over its maxLength of 256.
 */
export function refusedUserId(metadata: unknown): string | undefined {
  const id = (metadata as { user_id?: unknown } | undefined)?.user_id;
  if (typeof id !== "string") return undefined;
  if (/[^\s@]+@[^\s@]+\.[^\s@]+/.test(id)) return "metadata.user_id: user_id appears to contain an email address. Please send a uuid or hash value instead.";
  if (id.length > 256) return "metadata.user_id: String should have at most 256 characters";
  return undefined;
}
