// The state behind budgets and rate limits, and the two operations that change it. Each is
// atomic over every scope a request touches: `admit` checks all of them and reserves in all of
// them, or in none (no check-then-increment race between instances); `settle` replaces the
// reservation with what the request actually cost. Reservations expire on their own, so a
// gateway that dies mid-request cannot hold budget forever.

export type ScopeCharge = {
  /** The scope's store key for the current window, e.g. `route:support|2026-11-22`. */
  key: string;
  /** For messages: `route:support`. */
  scope: string;
  limitNano: number;
  mode: "hard" | "soft";
  /** When the window ends (ms); its state may be dropped some time after. 0 for `total`. */
  windowEndsAt: number;
};

export type RateCheck = {
  /** For messages and keys: `key:search-app`. */
  scope: string;
  rpm?: number;
  tpm?: number;
};

export type AdmitPlan = {
  requestId: string;
  now: number;
  /** The reservation frees itself at this time if the request never settles. */
  reservationExpiresAt: number;
  amountNano: number;
  scopes: ScopeCharge[];
  rates: RateCheck[];
  /**
   * Tokens the request may use at most (prompt bound + output bound), counted at once against
   * the tokens-per-minute limits it passes, so that concurrent requests cannot all slip under a
   * limit none of them has used yet. The settle replaces them with the tokens actually used.
   * Absent: none.
   */
  tokens?: number;
};

export type ScopeLevel = { spentNano: number; reservedNano: number };

export type AdmitResult =
  | { admitted: true; levels: ScopeLevel[]; softExceeded: string[] }
  | { admitted: false; reason: "budget"; scope: ScopeCharge; level: ScopeLevel }
  | { admitted: false; reason: "rate"; rate: RateCheck; kind: "rpm" | "tpm"; retryAfterSeconds: number };

export type SettlePlan = {
  requestId: string;
  now: number;
  /** The same scope keys the admission charged. */
  scopeKeys: string[];
  /**
   * When each of those windows ends (ms; 0 for `total`), in the same order: a settle that finds
   * its scope key gone makes it again with the expiry its admission gave it. Absent in a
   * settlement kept by an earlier version (only keys still there are then settled).
   */
  windowEndsAt?: number[];
  actualNano: number;
  /** Tokens the request used, input and output, for tokens-per-minute limits. */
  tokens: number;
  rateScopes: string[];
  /** The tokens its admission counted, and when: the settle corrects that minute's count. */
  reservedTokens?: number;
  admittedAt?: number;
};

export interface AdmissionStore {
  admit(plan: AdmitPlan): Promise<AdmitResult>;
  /** Idempotent by request id: a retried settle never counts twice. */
  settle(plan: SettlePlan): Promise<void>;
  /**
   * Pushes the expiry of reservations still held out to `expiresAt` (never earlier). One already
   * settled or expired stays gone: its request still settles with its actual cost.
   */
  extend(requestIds: string[], expiresAt: number): Promise<void>;
  levels(scopeKeys: string[], now: number): Promise<ScopeLevel[]>;
  /** Whether the store is connected now, where it can tell (for health checks; absent: in-process). */
  connected?(): boolean;
}

/** Sliding-window counter over one-minute buckets: the previous minute weighs what is left of it. */
export const MINUTE_MS = 60_000;

export function slidingEstimate(previous: number, current: number, now: number): number {
  const elapsed = (now % MINUTE_MS) / MINUTE_MS;
  return previous * (1 - elapsed) + current;
}

/**
 * Seconds until the sliding estimate lets a retry through: it must come down to `room` (rpm: one
 * request fits, so rpm − 1; tpm: below the limit, `strict`). The previous minute's weight falls
 * off over this minute, then this minute's over the next; "the next minute" alone would be too
 * early, because at its start the minute before still weighs in whole.
 */
export function secondsUntilRoom(previous: number, current: number, now: number, room: number, strict: boolean): number {
  const elapsed = (now % MINUTE_MS) / MINUTE_MS;
  const fits = (estimate: number) => (strict ? estimate < room : estimate <= room);
  let waitMs: number;
  if (fits(current) && previous > 0) {
    // Later in this minute: previous × (1 − f) + current ≤ room.
    waitMs = Math.max(0, 1 - (room - current) / previous - elapsed) * MINUTE_MS;
  } else if (fits(current)) {
    waitMs = 0;
  } else {
    // In the next minute, this minute's count weighs in as the previous: current × (1 − f) ≤ room.
    const into = current > 0 ? Math.max(0, 1 - room / current) : 0;
    waitMs = (1 - elapsed) * MINUTE_MS + into * MINUTE_MS;
  }
  // Whole seconds, rounded up (and past the edge itself where the limit is strict).
  let seconds = Math.max(1, Math.ceil((waitMs + (strict ? 1 : 0)) / 1000));
  // Floating point can put the estimate a hair over the room at that very second (51 × (1 − 20/60)
  // is 34.000000000000004, not 34): weighed as admission will weigh it, a second more where needed.
  // Two minutes on, nothing weighs in any more, so this ends.
  while (seconds < 120 && !fits(estimateAt(previous, current, now, now + seconds * 1000))) seconds++;
  return seconds;
}

/** The sliding estimate at a later time `at`, from the counts of `now`'s minute and the one before. */
function estimateAt(previous: number, current: number, now: number, at: number): number {
  const minutes = Math.floor(at / MINUTE_MS) - Math.floor(now / MINUTE_MS);
  if (minutes === 0) return slidingEstimate(previous, current, at);
  if (minutes === 1) return slidingEstimate(current, 0, at);
  return 0;
}

/** A rate check that refuses a request, with its scope's counts for the minute before and this one. */
export type RateRefusal = { rate: RateCheck; kind: "rpm" | "tpm"; previous: number; current: number };

/**
 * The answer to a request that rate checks refuse: the check that lets one through last, with its
 * wait. Every check is weighed, not only the first that refuses: told the route's wait of a
 * second while its key's minute is full, a client's retry meets another 429.
 */
export function longestRateWait(refusals: readonly RateRefusal[], now: number): Extract<AdmitResult, { reason: "rate" }> {
  let longest: Extract<AdmitResult, { reason: "rate" }> | undefined;
  for (const { rate, kind, previous, current } of refusals) {
    const retryAfterSeconds = kind === "rpm" ? secondsUntilRoom(previous, current, now, rate.rpm! - 1, false) : secondsUntilRoom(previous, current, now, rate.tpm!, true);
    if (!longest || retryAfterSeconds > longest.retryAfterSeconds) longest = { admitted: false, reason: "rate", rate, kind, retryAfterSeconds };
  }
  if (!longest) throw new Error("longestRateWait needs at least one refusal");
  return longest;
}
