import type { ChatResponse } from "../../model/chat-response.ts";
import type { OpenAIUsageDetails } from "../../model/stream-part.ts";
import type { Usage } from "../../model/usage.ts";
import { totalInputTokens } from "../../model/usage.ts";
import { newAnswerId } from "../answer-id.ts";
import { toOpenAIFinishReason } from "../finish-reasons.ts";

export function renderOpenAIResponse(response: ChatResponse) {
  const text = response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
  const toolCalls = response.content.flatMap((part) =>
    part.type === "tool-call"
      ? [{ id: part.id, type: "function" as const, function: { name: part.name, arguments: part.arguments } }]
      : [],
  );
  return {
    id: response.id || newAnswerId("chatcmpl-"), // a decoder may send none
    object: "chat.completion" as const,
    // OpenAI's own, as its answer said; the gateway's clock for a provider that gives none.
    created: response.created ?? Math.floor(Date.now() / 1000),
    model: response.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: text.length > 0 || (toolCalls.length === 0 && !response.refusal) ? text : null,
          refusal: response.refusal ?? null,
          ...(response.annotations ? { annotations: response.annotations } : {}),
          // A local decoder's thinking, where llama-server puts it (see the stream renderer).
          ...(response.reasoning ? { reasoning_content: response.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: response.logprobs || response.refusalLogprobs ? { content: response.logprobs ?? null, refusal: response.refusalLogprobs ?? null } : null,
        finish_reason: toOpenAIFinishReason(response.finishReason),
      },
    ],
    usage: renderOpenAIUsage(response.usage ?? {}, response.openAIUsageDetails),
    ...(response.serviceTier ? { service_tier: response.serviceTier } : {}),
    ...(response.systemFingerprint ? { system_fingerprint: response.systemFingerprint } : {}),
  };
}

/**
 * OpenAI counts cached tokens inside prompt_tokens and reasoning inside completion_tokens.
 * `details`: OpenAI's other detail counts (accepted and rejected prediction tokens, audio tokens),
 * beside the billed ones as it sent them.
 */
export function renderOpenAIUsage(usage: Usage, details?: OpenAIUsageDetails) {
  const promptTokens = totalInputTokens(usage);
  const completionTokens = usage.outputTokens ?? 0;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0, ...details?.prompt_tokens_details },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0, ...details?.completion_tokens_details },
  };
}
