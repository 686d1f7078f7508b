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

/**
 * The most tokens one call can bill of one kind. Contexts run to about 10M tokens, so a larger
 * count is a broken report (a local server's unsigned −1 is 2^64 − 1), which would bill absurd
 * sums and overflow Redis's 64-bit counters. The meter treats such a figure, and a negative one,
 * as not reported; adapters pass them on as they came rather than clamp them into something
 * plausible-looking.
 */
export const MAX_PLAUSIBLE_TOKENS = 2 ** 31 - 1;

export function isPlausibleTokenCount(count: number): boolean {
  return Number.isFinite(count) && count >= 0 && count <= MAX_PLAUSIBLE_TOKENS;
}

export const ZERO_USAGE: Required<Usage> = { inputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 0, reasoningTokens: 0 };

/** The usage without the counts no server could mean (negative, not finite, absurdly large). */
export function plausibleUsage(usage: Usage): { usage: Usage; dropped: boolean } {
  const entries = Object.entries(usage) as [keyof Usage, number | undefined][];
  // Every record passes here: copy only when there is something to drop.
  if (entries.every(([, count]) => count === undefined || isPlausibleTokenCount(count))) return { usage, dropped: false };
  return { usage: Object.fromEntries(entries.filter(([, count]) => count !== undefined && isPlausibleTokenCount(count))), dropped: true };
}

/** A count as the ledger keeps it: a whole, non-negative number, whatever a server reported. */
export const wholeCount = (count: number | undefined) => (Number.isFinite(count) ? Math.max(0, Math.trunc(count!)) : 0);

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
 * Merges usage reports seen during one stream. OpenAI sends one final usage chunk; Anthropic sends
 * input in message_start and CUMULATIVE output in message_delta. Output fields take the largest
 * value seen. The input fields are one split of one prompt, so they go together: the report with
 * the larger total input wins whole, and of two equal totals the later (a first report without
 * prompt_tokens_details, then one with them, must not bill the cached tokens twice: once as
 * uncached input, once as cache reads).
 */
export function mergeUsage(seen: Usage | undefined, next: Usage): Usage {
  if (!seen) return { ...next };
  const merged: Usage = { ...seen };
  const nextHasInput = INPUT_FIELDS.some((key) => next[key] !== undefined);
  if (nextHasInput && totalInputTokens(next) >= totalInputTokens(seen)) {
    for (const key of INPUT_FIELDS) {
      if (next[key] === undefined) delete merged[key];
      else merged[key] = next[key];
    }
  }
  for (const key of OUTPUT_FIELDS) {
    const value = next[key];
    if (value !== undefined) merged[key] = Math.max(merged[key] ?? 0, value);
  }
  return merged;
}

export const INPUT_FIELDS = ["inputTokens", "cacheReadTokens", "cacheWrite5mTokens", "cacheWrite1hTokens"] as const;
const OUTPUT_FIELDS = ["outputTokens", "reasoningTokens"] as const;
