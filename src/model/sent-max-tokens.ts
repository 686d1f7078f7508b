import { DEFAULT_ANTHROPIC_MAX_TOKENS } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import type { ProviderType } from "./chat-model.ts";
import type { ChatRequest } from "./chat-request.ts";

/**
 * The max_tokens a call carries upstream: the request's as the per-target policies left it (sent
 * as OpenAI's max_completion_tokens or max_tokens), or, for Anthropic, which requires one, the
 * adapter's default. Undefined: none was sent, and only the model's own limit bounds the answer.
 * Every output token counts within it: OpenAI's reasoning tokens and Claude's thinking too.
 */
export function sentMaxTokens(providerType: ProviderType, request: Pick<ChatRequest, "maxTokens">): number | undefined {
  return request.maxTokens ?? (providerType === "anthropic" ? DEFAULT_ANTHROPIC_MAX_TOKENS : undefined);
}
