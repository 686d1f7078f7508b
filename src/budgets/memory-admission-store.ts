import {
  MINUTE_MS,
  longestRateWait,
  slidingEstimate,
  type AdmissionStore,
  type AdmitPlan,
  type AdmitResult,
  type RateRefusal,
  type ScopeLevel,
  type SettlePlan,
} from "./admission-store.ts";
import { RecentIds } from "../runtime/recent-ids.ts";

// The embedded store: the same guarantees as the Redis script within one process. Each operation
// runs to completion without awaiting anything, so JavaScript's single thread makes it atomic.
// The Workers' Durable Object (budgets-object.ts) runs this same store and keeps what must
// survive a restart (levels and reservations) through a journal.

export type Reservation = { keys: string[]; amountNano: number; expiresAt: number };

/** Told of every change to what must outlive the process: a scope's level, a reservation (undefined: gone). */
/** How long a scope's level is kept after its window ends (Redis keeps its keys as long). */
export const LEVEL_RETENTION_MS = 40 * 86_400_000;

export interface AdmissionJournal {
  /** A level changed (undefined: dropped, its window long over); `windowEndsAt` 0 for none known. */
  level(scopeKey: string, level: ScopeLevel | undefined, windowEndsAt: number): void;
  reservation(requestId: string, reservation: Reservation | undefined): void;
  /** A request was settled at `at`: a retry of its settle must not count it again. */
  settled(requestId: string, at: number): void;
}

export class MemoryAdmissionStore implements AdmissionStore {
  private readonly scopes = new Map<string, ScopeLevel>();
  private readonly reservations = new Map<string, Reservation>();
  private readonly settled = new RecentIds(100_000);
  private readonly counters = new Map<string, number>();
  /**
   * The requests whose token reservation these counters hold, with the minute it is counted in.
   * Counters live in memory only: a store started again from its journal (a Durable Object after
   * a deploy) has its reservations back but not their counts, and the settle of such a request
   * must not take its reservation off a counter that never held it.
   */
  private readonly tokensCounted = new Map<string, number>();
  /** No reservation expires before this: sweeps before it would find nothing to free. */
  private nextExpiry = Infinity;
  /** The minute whose rate counters were last pruned. */
  private prunedBucket = -Infinity;
  /** Each scope key's window end, from the admissions that charged it (0: `total`). */
  private readonly windowEnds = new Map<string, number>();
  /** When levels of long-ended windows were last dropped. */
  private prunedLevelsAt = -Infinity;

  constructor(private readonly journal?: AdmissionJournal) {}

  /** Spend already on record (from the ledger file at start-up), so a restart does not reset budgets. */
  addSpent(scopeKey: string, nano: number): void {
    this.level(scopeKey).spentNano += nano;
  }

  /** State a journal kept, read back after a restart (the Durable Object's storage). */
  restore(
    levels: Iterable<[string, ScopeLevel & { windowEndsAt?: number }]>,
    reservations: Iterable<[string, Reservation]>,
    settledIds: Iterable<string> = [],
  ): void {
    for (const requestId of settledIds) this.settled.add(requestId);
    for (const [key, { spentNano, reservedNano, windowEndsAt }] of levels) {
      this.scopes.set(key, { spentNano, reservedNano });
      if (windowEndsAt) this.windowEnds.set(key, windowEndsAt);
    }
    for (const [requestId, reservation] of reservations) {
      this.reservations.set(requestId, reservation);
      this.nextExpiry = Math.min(this.nextExpiry, reservation.expiresAt);
    }
  }

  async admit(plan: AdmitPlan): Promise<AdmitResult> {
    this.sweep(plan.now);
    // The same request admitted again (a client of this store resent it): it holds its reservation.
    if (this.reservations.has(plan.requestId)) {
      return { admitted: true, levels: plan.scopes.map((scope) => ({ ...this.level(scope.key) })), softExceeded: [] };
    }
    const bucket = Math.floor(plan.now / MINUTE_MS);
    const refusals: RateRefusal[] = [];
    for (const rate of plan.rates) {
      const [requestsBefore, requestsNow] = [this.count(`${rate.scope}|rpm|${bucket - 1}`), this.count(`${rate.scope}|rpm|${bucket}`)];
      if (rate.rpm !== undefined && slidingEstimate(requestsBefore, requestsNow, plan.now) + 1 > rate.rpm) {
        refusals.push({ rate, kind: "rpm", previous: requestsBefore, current: requestsNow });
      }
      const [tokensBefore, tokensNow] = [this.count(`${rate.scope}|tpm|${bucket - 1}`), this.count(`${rate.scope}|tpm|${bucket}`)];
      if (rate.tpm !== undefined && slidingEstimate(tokensBefore, tokensNow, plan.now) >= rate.tpm) {
        refusals.push({ rate, kind: "tpm", previous: tokensBefore, current: tokensNow });
      }
    }
    if (refusals.length > 0) return longestRateWait(refusals, plan.now);
    const levels = plan.scopes.map((scope) => ({ ...this.level(scope.key) }));
    const softExceeded: string[] = [];
    // Of the hard scopes that refuse, the one that frees last (a total budget never does): a retry
    // when it resets is the first that can pass. Was: the first in order, whose reset could come
    // while another scope still refused.
    let blocking: { scope: (typeof plan.scopes)[number]; level: (typeof levels)[number] } | undefined;
    for (const [index, scope] of plan.scopes.entries()) {
      const level = levels[index]!;
      if (level.spentNano + level.reservedNano + plan.amountNano <= scope.limitNano) continue;
      if (scope.mode !== "hard") softExceeded.push(scope.scope);
      else if (!blocking || freesAt(scope) > freesAt(blocking.scope)) blocking = { scope, level };
    }
    if (blocking) return { admitted: false, reason: "budget", ...blocking };
    for (const scope of plan.scopes) {
      this.windowEnds.set(scope.key, scope.windowEndsAt);
      this.changeLevel(scope.key, 0, plan.amountNano);
    }
    const reservation = { keys: plan.scopes.map((scope) => scope.key), amountNano: plan.amountNano, expiresAt: plan.reservationExpiresAt };
    this.reservations.set(plan.requestId, reservation);
    this.journal?.reservation(plan.requestId, reservation);
    this.nextExpiry = Math.min(this.nextExpiry, plan.reservationExpiresAt);
    for (const rate of plan.rates) {
      this.bump(`${rate.scope}|rpm|${bucket}`, 1, bucket);
      if (rate.tpm !== undefined && plan.tokens) {
        this.bump(`${rate.scope}|tpm|${bucket}`, plan.tokens, bucket);
        this.tokensCounted.set(plan.requestId, bucket);
      }
    }
    return { admitted: true, levels, softExceeded };
  }

  async settle(plan: SettlePlan): Promise<void> {
    if (this.settled.has(plan.requestId)) return;
    this.settled.add(plan.requestId);
    this.journal?.settled(plan.requestId, plan.now);
    this.sweep(plan.now);
    this.release(plan.requestId);
    for (const key of plan.scopeKeys) this.changeLevel(key, plan.actualNano, 0);
    const bucket = Math.floor(plan.now / MINUTE_MS);
    const admittedBucket = Math.floor((plan.admittedAt ?? plan.now) / MINUTE_MS);
    const reserved = plan.reservedTokens ?? 0;
    const counted = this.tokensCounted.delete(plan.requestId);
    for (const scope of plan.rateScopes) {
      // The admission's count is replaced by the tokens used, in the minute it was made; if that
      // minute has left the window, or its count is not here, the tokens count now.
      const admittedKey = `${scope}|tpm|${admittedBucket}`;
      if (reserved > 0 && counted && admittedBucket >= bucket - 1 && this.counters.has(admittedKey)) this.bump(admittedKey, plan.tokens - reserved, bucket);
      else this.bump(`${scope}|tpm|${bucket}`, plan.tokens, bucket);
    }
  }

  async extend(requestIds: string[], expiresAt: number): Promise<void> {
    for (const requestId of requestIds) {
      const reservation = this.reservations.get(requestId);
      if (!reservation || reservation.expiresAt >= expiresAt) continue;
      reservation.expiresAt = expiresAt;
      this.journal?.reservation(requestId, reservation);
    }
  }

  async levels(scopeKeys: string[], now: number): Promise<ScopeLevel[]> {
    this.sweep(now);
    // A read makes no level: one created here would have no window end, and would never be dropped.
    return scopeKeys.map((key) => ({ ...(this.scopes.get(key) ?? { spentNano: 0, reservedNano: 0 }) }));
  }

  /**
   * Frees expired reservations. It walks every reservation, so it runs only once one may have
   * expired: with thousands of long streams in flight, a walk on every request would cost more
   * than the request's own admission. (Renewals only push expiries later, so `nextExpiry` stays a
   * lower bound.)
   */
  private sweep(now: number): void {
    if (now >= this.nextExpiry) {
      this.nextExpiry = Infinity;
      for (const [requestId, reservation] of this.reservations) {
        if (reservation.expiresAt <= now) this.release(requestId);
        else this.nextExpiry = Math.min(this.nextExpiry, reservation.expiresAt);
      }
    }
    if (now - this.prunedLevelsAt >= MINUTE_MS) this.pruneEndedWindows(now);
  }

  /**
   * Drops the levels of windows that ended long ago (once a minute), so a long-running process
   * does not keep a level per scope per day for ever. No reservation can still count in them:
   * reservations expire within minutes, and the sweep before this has freed those.
   */
  private pruneEndedWindows(now: number): void {
    this.prunedLevelsAt = now;
    for (const [key, endsAt] of this.windowEnds) {
      if (endsAt === 0 || endsAt + LEVEL_RETENTION_MS >= now) continue;
      this.scopes.delete(key);
      this.windowEnds.delete(key);
      this.journal?.level(key, undefined, endsAt);
    }
  }

  private release(requestId: string): void {
    const reservation = this.reservations.get(requestId);
    if (!reservation) return;
    for (const key of reservation.keys) this.changeLevel(key, 0, -reservation.amountNano);
    this.reservations.delete(requestId);
    this.journal?.reservation(requestId, undefined);
  }

  private changeLevel(key: string, spentNano: number, reservedNano: number): void {
    const level = this.level(key);
    level.spentNano += spentNano;
    level.reservedNano += reservedNano;
    this.journal?.level(key, level, this.windowEnds.get(key) ?? 0);
  }

  private level(key: string): ScopeLevel {
    let level = this.scopes.get(key);
    if (!level) this.scopes.set(key, (level = { spentNano: 0, reservedNano: 0 }));
    return level;
  }

  private count(key: string): number {
    return this.counters.get(key) ?? 0;
  }

  private bump(key: string, by: number, bucket: number): void {
    this.counters.set(key, this.count(key) + by);
    // Buckets older than the previous minute no longer count anywhere: dropped once a minute (a
    // walk on every request, once thousands of keys had rate limits, cost more than the request).
    if (bucket !== this.prunedBucket) {
      this.prunedBucket = bucket;
      const oldest = bucket - 1;
      for (const counterKey of this.counters.keys()) if (Number(counterKey.slice(counterKey.lastIndexOf("|") + 1)) < oldest) this.counters.delete(counterKey);
      for (const [requestId, counted] of this.tokensCounted) if (counted < oldest) this.tokensCounted.delete(requestId);
    }
  }
}

/** When a scope's window ends and its spend frees (a total budget's never does). */
const freesAt = (scope: { windowEndsAt: number }) => (scope.windowEndsAt > 0 ? scope.windowEndsAt : Infinity);
