// Token usage normalized across providers. Input is split so that no token is counted twice:
// OpenAI's prompt_tokens INCLUDES cached tokens, Anthropic's input_tokens EXCLUDES cache reads and
// writes; both become `inputTokens` = uncached input only. `undefined` means "not reported",
// which is different from zero (a stream that was cut off may never report usage).

export type Usage = {
  /** Input tokens billed at the full input price (cache reads and writes excluded). */
  inputTokens?: number;
  cacheReadTokens?: number;
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  /** All output tokens, reasoning included. */
  outputTokens?: number;
  /** The part of outputTokens spent on reasoning. */
  reasoningTokens?: number;
};

/** Every input token the model read: uncached + cache reads + cache writes. */
export function totalInputTokens(usage: Usage): number {
  return (
    (usage.inputTokens ?? 0) +
    (usage.cacheReadTokens ?? 0) +
    (usage.cacheWrite5mTokens ?? 0) +
    (usage.cacheWrite1hTokens ?? 0)
  );
}

/**
 * Merges usage reports seen during one stream by taking the largest value per field: OpenAI sends
 * one final usage chunk, Anthropic sends input in message_start and CUMULATIVE output in
 * message_delta, so the maximum is right for both and never double-counts.
 */
export function mergeUsage(seen: Usage | undefined, next: Usage): Usage {
  if (!seen) return { ...next };
  const merged: Usage = { ...seen };
  for (const key of Object.keys(next) as (keyof Usage)[]) {
    const value = next[key];
    if (value === undefined) continue;
    merged[key] = Math.max(merged[key] ?? 0, value);
  }
  return merged;
}
