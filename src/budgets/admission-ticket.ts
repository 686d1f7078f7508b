import type { CostRecord } from "../metering/cost-record.ts";
import { totalInputTokens } from "../model/usage.ts";
import type { AdmissionStore, RateCheck, ScopeCharge, ScopeLevel } from "./admission-store.ts";
import type { ReservationKeeper } from "./reservation-keeper.ts";
import type { Settlements } from "./settlements.ts";

// What an admitted request holds: its reservation on the budgets and rate limits, settled with the
// actual cost once its record is known, and the per-request cap it is held to across fallbacks.

/** A target of a route, as records and the router name it. */
type TargetName = { provider: string; model: string };

export type Ticket = {
  /** Scopes a soft budget was over when this request was let through. */
  softExceeded: string[];
  /**
   * Set when a budget applies, the request named no max_tokens, and some target's maximum output
   * is unknown (a local decoder): the output bound the reservation assumed, which the request
   * must then be held to, or the reservation would not bound its cost.
   */
  outputBound?: number;
  /** The least budget left among this request's scopes once it costs `actualNano` (undefined: no budget applies). */
  remainingNano(actualNano: number): number | undefined;
  /** Replaces the reservation with the actual cost (none when no record was made). */
  settle(record: CostRecord | undefined): Promise<void>;
  /**
   * Charges a billed call the route wants to move on from (its record, `attemptOf`) to the same
   * budgets, now, if they can take it on top of what this request holds for its next call; false
   * where a hard budget cannot (the request then ends with that call's failure, billed once).
   * `refused`: the targets the route skipped so far for a per-target refusal (a 400), which it
   * will not call: the per-request cap does not weigh them.
   */
  chargeEarlierCall(record: CostRecord, refused?: readonly TargetName[]): Promise<boolean>;
};

/** No budget, rate limit or cap applies: nothing held, nothing to settle. */
export const FREE_PASS: Ticket = { softExceeded: [], remainingNano: () => undefined, settle: async () => {}, chargeEarlierCall: async () => true };

/**
 * The per-request cap holds for the whole request: the billed calls before a fallback, plus the
 * worst case of a target still to be tried. Was: checked at admission only, so a fallback after a
 * billed call could take the request past it.
 */
export class RequestCap {
  /** What billed calls before a fallback were charged, since this request was admitted. */
  earlierNano = 0;

  /** `perTargetNano[i]`: the worst case of `targets[i]`. */
  constructor(
    private readonly capNano: number | undefined,
    private readonly targets: readonly TargetName[],
    private readonly perTargetNano: readonly number[],
  ) {}

  /** Whether the cap takes `call`, billed, on top of the calls before it and the dearest target left. */
  takes(call: CostRecord, refused: readonly TargetName[]): boolean {
    if (this.capNano === undefined) return true;
    // The route does not call again a target it has tried: this call's, and those it fell back
    // from, billed or not (a 429), nor one its per-target step refused (a 400: never called).
    // Was: first the 429'd targets, then the refused ones still weighed, so a dear target the
    // route had left behind stopped it before a cheap one that fits. Read from the record and
    // the router, not from a position in `route.targets`: a "cheapest" route tries its targets
    // in another order. A target not reached yet is weighed even if it will refuse: the
    // per-target step runs only when the route reaches it.
    const tried = new Set([call, ...(call.fallbackFrom ?? []), ...refused].map(targetKey));
    const next = Math.max(0, ...this.targets.map((target, index) => (tried.has(targetKey(target)) ? 0 : this.perTargetNano[index]!)));
    return this.earlierNano + call.cost.totalNano + next <= this.capNano;
  }

  charged(call: CostRecord): void {
    this.earlierNano += call.cost.totalNano;
  }
}

/** One target of a route, as records name it. */
const targetKey = ({ provider, model }: TargetName) => `${provider}\u0000${model}`;

/** A request under a per-request cap alone: nothing reserved, its earlier calls weighed against the cap. */
export function cappedPass(cap: RequestCap, outputBound: number | undefined): Ticket {
  return {
    ...FREE_PASS,
    ...(outputBound !== undefined ? { outputBound } : {}),
    async chargeEarlierCall(call, refused = []) {
      if (!cap.takes(call, refused)) return false;
      cap.charged(call);
      return true;
    },
  };
}

/** What the store admitted, and what settling it needs. */
export type Reservation = {
  requestId: string;
  admittedAt: number;
  scopes: ScopeCharge[];
  /** Each scope's level when admitted, in the order of `scopes`. */
  levels: ScopeLevel[];
  rates: RateCheck[];
  /** The tokens counted against tokens-per-minute limits until the settle knows the real figure. */
  reservedTokens: number;
  softExceeded: string[];
  outputBound: number | undefined;
};

export type ReservedTicketDeps = {
  store: AdmissionStore;
  keeper: ReservationKeeper;
  settlements: Settlements;
  now: () => number;
  reservationTtlMs: number;
  log: ((line: string) => void) | undefined;
};

/** The ticket of a request that holds a reservation on its budgets or rate limits. */
export function reservedTicket(reservation: Reservation, cap: RequestCap, deps: ReservedTicketDeps): Ticket {
  const { requestId, admittedAt, scopes, levels, rates, reservedTokens, softExceeded, outputBound } = reservation;
  const { store, keeper, settlements, now, reservationTtlMs, log } = deps;
  let settled = false;
  const scopeKeys = scopes.map((scope) => scope.key);
  const windowEndsAt = scopes.map((scope) => scope.windowEndsAt);
  const rateScopes = rates.filter((rate) => rate.tpm !== undefined).map((rate) => rate.scope);
  return {
    softExceeded,
    ...(outputBound !== undefined ? { outputBound } : {}),
    remainingNano(actualNano) {
      if (scopes.length === 0) return undefined;
      return Math.min(...scopes.map((scope, index) => scope.limitNano - levelTotal(levels[index]!) - cap.earlierNano - actualNano));
    },
    async chargeEarlierCall(call, refused = []) {
      if (!cap.takes(call, refused)) return false;
      if (scopes.length === 0 && rateScopes.length === 0) {
        cap.charged(call);
        return true;
      }
      const at = now();
      try {
        const held = await store.admit({ requestId: call.requestId, now: at, reservationExpiresAt: at + reservationTtlMs, amountNano: call.cost.totalNano, scopes, rates: [] });
        if (!held.admitted) return false;
      } catch (error) {
        // Fail closed, as admission does: no second call on money that could not be counted.
        log?.(`[tollgate] error: charging ${call.requestId} failed (${(error as Error).message}); not trying another target`);
        return false;
      }
      // Reserved: the money is held from here, so the next call may go; the settle that makes it
      // spent may take its time (retried, like every settle).
      cap.charged(call);
      const tokens = totalInputTokens(call.usage) + call.usage.outputTokens;
      void settlements.settleUntilDone({ requestId: call.requestId, now: at, scopeKeys, windowEndsAt, actualNano: call.cost.totalNano, tokens, rateScopes });
      return true;
    },
    async settle(record) {
      if (settled) return;
      settled = true;
      keeper.release(requestId);
      await settlements.settleUntilDone({
        requestId,
        now: now(),
        scopeKeys,
        windowEndsAt,
        actualNano: record?.cost.totalNano ?? 0,
        tokens: record ? totalInputTokens(record.usage) + record.usage.outputTokens : 0,
        rateScopes,
        reservedTokens,
        admittedAt,
      });
    },
  };
}

const levelTotal = (level: ScopeLevel) => level.spentNano + level.reservedNano;
