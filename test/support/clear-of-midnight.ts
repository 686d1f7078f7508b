const DAY_MS = 86_400_000;

/**
 * For test files that read today's budget or ledger keys on the real clock: they work out "today"
 * more than once, and a run across UTC midnight would read two different days. When less than
 * `marginMs` is left of the day, this waits for the next one (at most a few minutes, once a day).
 */
export async function clearOfMidnight(marginMs = 120_000): Promise<void> {
  const left = DAY_MS - (Date.now() % DAY_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
}

/** How long a hook that calls clearOfMidnight may take. */
export const CLEAR_OF_MIDNIGHT_TIMEOUT_MS = 180_000;
