import type { Usage } from "../../src/model/usage.ts";

type AnthropicUsage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  /** The thinking part of output_tokens (inside it, as OpenAI's reasoning_tokens are). */
  output_tokens_details?: { thinking_tokens?: number | null } | null;
};

/**
 * input_tokens already EXCLUDES cache reads and writes. Cache writes are split by TTL when the
 * API says so (`cache_creation`); an older answer with only the total is all 5-minute writes,
 * the only TTL that existed then.
 */
export function convertAnthropicUsage(usage: AnthropicUsage): Usage {
  const converted: Usage = {};
  if (usage.input_tokens != null) converted.inputTokens = usage.input_tokens;
  if (usage.output_tokens != null) converted.outputTokens = usage.output_tokens;
  if (usage.output_tokens_details?.thinking_tokens != null) converted.reasoningTokens = usage.output_tokens_details.thinking_tokens;
  if (usage.cache_read_input_tokens != null) converted.cacheReadTokens = usage.cache_read_input_tokens;
  if (usage.cache_creation) {
    converted.cacheWrite5mTokens = usage.cache_creation.ephemeral_5m_input_tokens ?? 0;
    converted.cacheWrite1hTokens = usage.cache_creation.ephemeral_1h_input_tokens ?? 0;
  } else if (usage.cache_creation_input_tokens != null) {
    converted.cacheWrite5mTokens = usage.cache_creation_input_tokens;
  }
  return converted;
}
