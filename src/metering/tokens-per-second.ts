import type { Usage } from "../model/usage.ts";

/**
 * A stream's output speed, in tokens per second over the stretch after its first visible token
 * (TTFT measured up to that one). Reasoning tokens were generated before the first visible one, so
 * they are not part of the stretch. Null where there is no stretch to measure.
 */
export function tokensPerSecondAfterFirst(usage: Required<Usage>, firstContentAt: number | undefined, finishedAt: number): number | null {
  if (firstContentAt === undefined || usage.outputTokens < 2) return null;
  const seconds = (finishedAt - firstContentAt) / 1000;
  const visibleAfterFirst = usage.outputTokens - usage.reasoningTokens - 1;
  return seconds > 0 && visibleAfterFirst > 0 ? Math.round((visibleAfterFirst / seconds) * 10) / 10 : null;
}
