import type { OpenAIUsageDetails } from "../../src/model/stream-part.ts";
import { isPlausibleTokenCount, type Usage } from "../../src/model/usage.ts";

type OpenAIUsage = {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
};

/** prompt_tokens INCLUDES cached_tokens; the neutral inputTokens is the uncached remainder. */
export function convertOpenAIUsage(usage: OpenAIUsage): Usage {
  // A count the server left out is unknown, not 0: the meter then counts it and flags the record
  // estimated (a usage object without prompt_tokens had billed the prompt at nothing).
  if (usage.prompt_tokens == null || usage.completion_tokens == null) {
    const known: Usage = {};
    if (usage.prompt_tokens != null) known.inputTokens = usage.prompt_tokens;
    if (usage.completion_tokens != null) known.outputTokens = usage.completion_tokens;
    return known;
  }
  const prompt = usage.prompt_tokens;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const outputTokens = usage.completion_tokens;
  // A figure no server could mean (a negative count, an unsigned −1) goes on as it came, for the
  // meter to set aside and count instead: clamped below, it would look like a real report. With
  // the cached part unknown, the whole prompt is input; with the prompt unknown, nothing is.
  if (!isPlausibleTokenCount(prompt)) return { inputTokens: prompt, outputTokens };
  if (!isPlausibleTokenCount(cached)) return { inputTokens: prompt, cacheReadTokens: cached, outputTokens };
  // Some local servers report more cached tokens than prompt tokens; never bill a negative remainder.
  const converted: Usage = { inputTokens: Math.max(0, prompt - cached), cacheReadTokens: Math.min(cached, prompt), outputTokens };
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (reasoning != null) converted.reasoningTokens = reasoning;
  return converted;
}

/**
 * The detail counts Usage has no field for (accepted and rejected prediction tokens, audio
 * tokens), as the server sent them, for OpenAI clients to read; none: undefined.
 */
export function openAIUsageDetails(usage: OpenAIUsage): OpenAIUsageDetails | undefined {
  const details: OpenAIUsageDetails = {};
  const prompt = countsBeside(usage.prompt_tokens_details, "cached_tokens");
  const completion = countsBeside(usage.completion_tokens_details, "reasoning_tokens");
  if (prompt) details.prompt_tokens_details = prompt;
  if (completion) details.completion_tokens_details = completion;
  return prompt || completion ? details : undefined;
}

/** The numeric fields of a details object but the one Usage holds (and bills). */
function countsBeside(details: object | null | undefined, billed: string): Record<string, number> | undefined {
  if (typeof details !== "object" || details === null) return undefined;
  const counts = Object.entries(details).filter(([name, count]) => name !== billed && typeof count === "number");
  return counts.length > 0 ? Object.fromEntries(counts) : undefined;
}
