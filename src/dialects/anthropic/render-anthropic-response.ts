import type { ChatResponse } from "../../model/chat-response.ts";
import type { RefusalDetails } from "../../model/stream-part.ts";
import type { Usage } from "../../model/usage.ts";
import { newAnswerId } from "../answer-id.ts";
import { toAnthropicStopReasonWith } from "../finish-reasons.ts";

export function renderAnthropicResponse(response: ChatResponse) {
  return {
    id: response.id || newAnswerId("msg_"), // a decoder may send none
    type: "message" as const,
    role: "assistant" as const,
    model: response.model,
    content: [
      // Anthropic has no refusal field: an OpenAI model's refusal reads as its answer's text.
      // A local decoder's thinking (`reasoning`, unsigned) is left out, as in the stream renderer.
      ...(response.refusal ? [{ type: "text" as const, text: response.refusal }] : []),
      ...response.content.map((part) => {
        switch (part.type) {
          case "text":
            return { type: "text" as const, text: part.text };
          case "tool-call":
            return { type: "tool_use" as const, id: part.id, name: part.name, input: parseToolArguments(part.arguments) };
          case "thinking":
            return { type: "thinking" as const, thinking: part.text, signature: part.signature };
          case "redacted-thinking":
            return { type: "redacted_thinking" as const, data: part.data };
        }
      }),
    ],
    stop_reason: toAnthropicStopReasonWith(response.finishReason, response.content.some((part) => part.type === "tool-call")),
    stop_sequence: response.stopSequence ?? null,
    stop_details: renderStopDetails(response.refusalDetails),
    usage: { ...renderAnthropicUsage(response.usage ?? {}), ...usageExtras(response) },
    // Present (null where there is none), as the SDK's Message (`container`) and BetaMessage
    // (`context_management`) types declare them: tollgate carries no containers.
    container: null,
    context_management: response.contextManagement ?? null,
  };
}

/**
 * A Message's usage fields besides its counts (message_start's too): where inference ran (apps
 * with data-residency rules check it), the tier Anthropic served it at (Priority Tier apps track
 * their commitment by it; null where another provider answered), and no server tool use, since
 * tollgate carries none.
 */
export function usageExtras(answer: { inferenceGeo?: string | undefined; anthropicServiceTier?: string | undefined }) {
  return { inference_geo: answer.inferenceGeo ?? null, service_tier: answer.anthropicServiceTier ?? null, server_tool_use: null };
}

/** Anthropic's input_tokens EXCLUDES cache reads and writes, exactly like the neutral inputTokens. */
export function renderAnthropicUsage(usage: Usage) {
  const write5m = usage.cacheWrite5mTokens ?? 0;
  const write1h = usage.cacheWrite1hTokens ?? 0;
  return {
    input_tokens: usage.inputTokens ?? 0,
    cache_creation_input_tokens: write5m + write1h,
    cache_read_input_tokens: usage.cacheReadTokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h },
    output_tokens: usage.outputTokens ?? 0,
    // The reasoning inside output_tokens (Claude's thinking, an OpenAI model's reasoning tokens).
    output_tokens_details: usage.reasoningTokens !== undefined ? { thinking_tokens: usage.reasoningTokens } : null,
  };
}

/**
 * A tool call's input as Anthropic has it: always an object (Anthropic refuses any other
 * `tool_use.input` with a 400, "Input should be a valid dictionary", and its SDK types it so).
 * Models sometimes emit arguments that are not one: invalid JSON, or JSON such as `[1,2]` or `"x"`
 * (OpenAI takes any string). Their text is kept as `_raw`; none at all, or `null`, is `{}`.
 */
export function parseToolArguments(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { _raw: text };
  }
  if (parsed === null) return {};
  return typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { _raw: text };
}

/** Claude's `stop_details`: why it refused, or null (every other stop). */
export function renderStopDetails(refusal: RefusalDetails | undefined) {
  return refusal ? { type: "refusal" as const, category: refusal.category, explanation: refusal.explanation } : null;
}
