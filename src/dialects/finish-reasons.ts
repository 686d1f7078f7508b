import type { FinishReason } from "../model/stream-part.ts";

// Finish reasons in both directions, in one place so the two dialects and the adapters agree.

export function toOpenAIFinishReason(reason: FinishReason): "stop" | "length" | "tool_calls" | "content_filter" {
  switch (reason) {
    case "length":
    case "context-window":
      return "length";
    case "tool-calls":
      return "tool_calls";
    case "content-filter":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * A finish reason that says the answer did NOT finish: vLLM ends a request its engine dropped
 * (shutdown, scale-down, sleep, an abort request) with HTTP 200, `finish_reason: "abort"` and
 * `[DONE]` (vllm-project/vllm#57082). Read as a finish, the cut-short answer would reach the
 * client, the ledger and the response cache as a complete one.
 */
export function isUnfinishedOpenAIReason(reason: string | null | undefined): boolean {
  return reason === "abort";
}

export function fromOpenAIFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool-calls";
    case "content_filter":
      return "content-filter";
    default:
      return "other";
  }
}

/**
 * Claude says `tool_use` whenever its answer calls tools, and Anthropic's tool runners run them
 * only then. OpenAI-shaped servers may finish such an answer with "stop": OpenAI itself for a
 * forced tool_choice, vLLM for a named one, Ollama in its stream. An answer with tool calls
 * that simply stopped (not cut by max_tokens) is a `tool_use` answer.
 */
export function toAnthropicStopReasonWith(reason: FinishReason, calledTools: boolean): AnthropicStopReason {
  return calledTools && reason === "stop" ? "tool_use" : toAnthropicStopReason(reason);
}

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal" | "pause_turn" | "model_context_window_exceeded";

export function toAnthropicStopReason(reason: FinishReason): AnthropicStopReason {
  switch (reason) {
    case "stop-sequence":
      return "stop_sequence";
    case "length":
      return "max_tokens";
    // Not max_tokens: asking for more tokens would not help, the context is full.
    case "context-window":
      return "model_context_window_exceeded";
    case "tool-calls":
      return "tool_use";
    case "content-filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

export function fromAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
      return "stop";
    case "stop_sequence":
      return "stop-sequence";
    case "max_tokens":
      return "length";
    case "model_context_window_exceeded":
      return "context-window";
    case "tool_use":
      return "tool-calls";
    case "refusal":
      return "content-filter";
    default:
      return "other";
  }
}
