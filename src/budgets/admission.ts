import type { Caller } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { PriceBook } from "../metering/price-book.ts";
import { hasCacheMarks, MIN_THINKING_BUDGET, thinkingBudget, type ChatRequest } from "../model/chat-request.ts";
import { totalInputTokens } from "../model/usage.ts";
import { findModelLimits } from "../pricing/find-model-price.ts";
import { formatUsd, usdToNano } from "../pricing/format-usd.ts";
import { priceInGeo } from "../pricing/inference-geo.ts";
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import type { AdmissionStore, RateCheck, ScopeCharge, ScopeLevel, SettlePlan } from "./admission-store.ts";
import type { BudgetConfig } from "./budget-config.ts";
import { windowKey, windowOf } from "./budget-window.ts";
import { ReservationKeeper } from "./reservation-keeper.ts";
import { DEFAULT_OUTPUT_BOUND, worstCaseCost } from "./worst-case-cost.ts";
import { unrefTimer } from "../runtime/unref-timer.ts";

// Admission, between the policies and the router: the per-request cap, the rate limits, and the
// budgets of every scope that applies (route, key, team) in one atomic store operation. The
// ticket it returns settles the reservation with the actual cost once the record is known.


export type BudgetScope = { scope: string; budget: BudgetConfig };

export type AdmissionDeps = {
  config: ResolvedConfig;
  store: AdmissionStore;
  prices: PriceBook;
  now?: () => number;
  log?: (line: string) => void;
  onSoftExceeded?: (scope: string) => void;
};

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
  chargeEarlierCall(record: CostRecord, refused?: readonly { provider: string; model: string }[]): Promise<boolean>;
};

export type AdmitInput = { requestId: string; caller: Caller; routeName: string; route: RouteConfig; request: ChatRequest };

export class Admission {
  private readonly now: () => number;
  /**
   * How long a reservation outlives the last renewal of its gateway. The keeper renews it every
   * third of this while its request runs, so it need not cover the longest request.
   */
  private readonly reservationTtlMs: number;
  /** Renews the reservations of requests in flight, so only a dead gateway's expire. */
  readonly keeper: ReservationKeeper;
  /** Settlements not yet through (the store is away): finished or handed over at shutdown. */
  private readonly settling = new Map<string, SettlePlan>();
  private closed = false;

  constructor(private readonly deps: AdmissionDeps) {
    this.now = deps.now ?? Date.now;
    this.reservationTtlMs = (deps.config.server.reservationTtlSeconds ?? DEFAULT_RESERVATION_TTL_SECONDS) * 1000;
    this.keeper = new ReservationKeeper(deps.store, this.reservationTtlMs, this.now, deps.log);
  }

  /** Every budget scope a caller may see on this route (for GET /v1/budgets as well). */
  scopesFor(caller: Caller, routeName: string): BudgetScope[] {
    const scopes: BudgetScope[] = [];
    const routeBudget = this.deps.config.routes[routeName]?.budget;
    if (routeBudget) scopes.push({ scope: `route:${routeName}`, budget: routeBudget });
    if (caller.kind === "key") {
      if (caller.key.budget) scopes.push({ scope: `key:${caller.key.id}`, budget: caller.key.budget });
      const teamBudget = this.deps.config.teams?.[caller.key.team]?.budget;
      if (teamBudget) scopes.push({ scope: `team:${caller.key.team}`, budget: teamBudget });
    }
    return scopes;
  }

  /**
   * At shutdown: tries each settlement still retrying once more, now (the store may be back since
   * its last attempt, which may be 30 s away), and returns those that still failed, for the host
   * to keep (unwritten-records.ts). Retrying stops: the process is going away.
   */
  private lastAdmitFailed: "unreachable" | "full" | false = false;

  /**
   * For health checks: the last admission could not reach the budget store (the next that reaches
   * it clears this), or the store says it is not connected now, which a gateway that started
   * while Redis was away, or that has had no request since it went, learns no other way.
   */
  get storeUnreachable(): boolean {
    return this.lastAdmitFailed !== false || this.deps.store.connected?.() === false;
  }

  /** What health checks say of the budget store: "ok", "unreachable", or "full" (Redis refuses writes past its maxmemory). */
  get storeState(): "ok" | "unreachable" | "full" {
    if (this.lastAdmitFailed === "full") return "full";
    return this.storeUnreachable ? "unreachable" : "ok";
  }

  async finishSettling(): Promise<SettlePlan[]> {
    this.closed = true;
    // All at once: one after another, a partitioned store held each for its command timeout
    // (2 s), and a dozen of them outlasted the process's stop deadline before the records that
    // come after them were written or kept.
    const plans = [...this.settling.values()];
    this.settling.clear();
    const results = await Promise.allSettled(plans.map((plan) => this.deps.store.settle(plan)));
    return plans.filter((_, index) => results[index]!.status === "rejected");
  }

  async admit({ requestId, caller, routeName, route, request }: AdmitInput): Promise<Ticket> {
    // A provider marked optional whose key is missing is never called (the router skips it), so
    // its price is no part of what this request can cost. Was: weighed all the same, so a cheap
    // request on a route whose dear target had no key got a 400 or a 402, and held that price.
    const callable = route.targets.filter((target) => !this.deps.config.providers[target.provider]?.unavailableReason);
    // Nothing can be called: the router answers with the key to set; nothing to reserve or count.
    if (callable.length === 0) return FREE_PASS;
    const now = this.now();
    let unknownMaximum = false;
    let largestOutputBound = 0;
    // Claude may bill input as a cache write: where the client placed its own breakpoints (sent as
    // they are, a 1-hour one bills 2× input) and where the route's policy caches, at its TTL (5
    // minutes: 1.25×). Other providers bill no writes. Was: 2× input on every target whenever
    // either applied, which refused requests under a cap they fit.
    const policy = route.policies?.promptCache;
    const cacheWrite = hasCacheMarks(request) ? "1h" : policy !== undefined && policy.mode !== "off" ? policy.ttl : undefined;
    const worst = worstCaseCost(
      request,
      callable.map((target) => {
        const provider = this.deps.config.providers[target.provider];
        const limits = provider ? findModelLimits(provider.type, target.model) : {};
        const listed = this.deps.prices.expectedPriceOf(target.provider, target.model);
        // Inference kept in the US bills 1.1×, also where the workspace's default (which tollgate
        // cannot see) keeps it there: unless the request says "global", a model that can (or one
        // the price list does not know, a later one) is reserved as running there.
        const geo = request.inferenceGeo ?? (limits.usOnlyInference !== false ? "us" : undefined);
        const price = listed && provider?.type === "anthropic" ? priceInGeo(listed, geo) : listed;
        // Only a priced target's bound weighs in the worst case (an unpriced one reserves nothing).
        if (price && provider?.type !== "anthropic" && limits.maxOutputTokens === undefined) unknownMaximum = true;
        // Anthropic always gets a max_tokens: the one the adapter sends when the client named none.
        const fallback = provider?.type === "anthropic" ? DEFAULT_ANTHROPIC_MAX_TOKENS : limits.maxOutputTokens ?? DEFAULT_OUTPUT_BOUND;
        const outputBound = Math.min(request.maxTokens ?? fallback, limits.maxOutputTokens ?? Infinity);
        largestOutputBound = Math.max(largestOutputBound, outputBound);
        const defaultBound = request.maxTokens === undefined && outputBound < (limits.maxOutputTokens ?? Infinity);
        return {
          price,
          outputBound,
          defaultBound,
          ...(limits.maxImageTokens ? { imageTokens: limits.maxImageTokens } : {}),
          ...(cacheWrite && provider?.type === "anthropic" ? { cacheWrite } : {}),
        };
      }),
    );

    const capNano = route.maxCostPerRequestUsd !== undefined ? usdToNano(route.maxCostPerRequestUsd) : undefined;
    if (capNano !== undefined && worst.amountNano > capNano) {
      throw perRequestCapError(route.maxCostPerRequestUsd!, worst.amountNano, worst.fittingMaxTokens(capNano), thinkingBudget(request));
    }
    /** What billed calls before a fallback were charged, since this request was admitted. */
    let earlierNano = 0;
    // The per-request cap holds for the whole request: the billed calls before a fallback, plus
    // the worst case of a target still to be tried. Was: checked at admission only, so a fallback
    // after a billed call could take the request past it.
    const capTakes = (call: CostRecord, refused: readonly { provider: string; model: string }[]) => {
      if (capNano === undefined) return true;
      // The route does not call again a target it has tried: this call's, and those it fell back
      // from, billed or not (a 429), nor one its per-target step refused (a 400: never called).
      // Was: first the 429'd targets, then the refused ones still weighed, so a dear target the
      // route had left behind stopped it before a cheap one that fits. Read from the record and
      // the router, not from a position in `route.targets`: a "cheapest" route tries its targets
      // in another order. A target not reached yet is weighed even if it will refuse: the
      // per-target step runs only when the route reaches it.
      const tried = new Set([call, ...(call.fallbackFrom ?? []), ...refused].map(({ provider, model }) => targetKey(provider, model)));
      const next = Math.max(0, ...callable.map((target, index) => (tried.has(targetKey(target.provider, target.model)) ? 0 : worst.perTargetNano[index]!)));
      return earlierNano + call.cost.totalNano + next <= capNano;
    };

    const budgets = this.scopesFor(caller, routeName);
    // What the worst case assumed for a request that named no max_tokens, when a budget or the
    // per-request cap relies on it: the request is then held to it.
    const holds = budgets.length > 0 || route.maxCostPerRequestUsd !== undefined;
    const outputBound = holds && unknownMaximum && request.maxTokens === undefined ? { outputBound: DEFAULT_OUTPUT_BOUND } : {};
    const scopes: ScopeCharge[] = budgets.map(({ scope, budget }) => {
      const window = windowOf(budget, now);
      return { key: windowKey(scope, window), scope, limitNano: usdToNano(budget.usd), mode: budget.mode, windowEndsAt: window.resetsAt?.getTime() ?? 0 };
    });
    const rates: RateCheck[] = [];
    if (route.rateLimit) rates.push({ scope: `route:${routeName}`, ...route.rateLimit });
    if (caller.kind === "key" && caller.key.rateLimit) rates.push({ scope: `key:${caller.key.id}`, ...caller.key.rateLimit });
    if (scopes.length === 0 && rates.length === 0) {
      if (capNano === undefined) return { ...FREE_PASS, ...outputBound };
      return {
        ...FREE_PASS,
        ...outputBound,
        async chargeEarlierCall(call, refused = []) {
          if (!capTakes(call, refused)) return false;
          earlierNano += call.cost.totalNano;
          return true;
        },
      };
    }

    // Counted against tokens-per-minute limits until the settle knows the real figure.
    const tokens = rates.some((rate) => rate.tpm !== undefined) ? worst.inputBound + largestOutputBound : 0;
    const result = await this.deps.store
      .admit({ requestId, now, reservationExpiresAt: now + this.reservationTtlMs, amountNano: worst.amountNano, scopes, rates, tokens })
      .then((answer) => {
        this.lastAdmitFailed = false;
        return answer;
      })
      .catch((error: Error) => {
        // Redis past its maxmemory under noeviction answers every write "OOM command not allowed …":
        // reached, but full. Was told as unreachable, which sent operators to the network.
        const full = error.message.startsWith("OOM ");
        this.lastAdmitFailed = full ? "full" : "unreachable";
        // Fail closed: a budget that cannot be checked is not spent blindly.
        this.deps.log?.(`[tollgate] error: budget store ${full ? "full" : "unreachable"} (${error.message}); refusing ${requestId}`);
        const what = full ? "the budget store is full (Redis refuses writes past its maxmemory)" : "the budget store is unreachable";
        throw new GatewayError("unavailable", `${what}; requests on budgeted or rate-limited routes are refused until it is ${full ? "given room" : "back"}`, {
          code: "budget_store_unavailable",
          retryAfterSeconds: 1,
          cause: error,
        });
      });
    if (!result.admitted && result.reason === "rate") {
      const unit = result.kind === "rpm" ? "requests" : "tokens";
      const limit = result.kind === "rpm" ? result.rate.rpm : result.rate.tpm;
      throw new GatewayError("rate_limit", `rate limit of ${limit} ${unit} per minute reached for ${result.rate.scope}; retry after ${result.retryAfterSeconds} s`, {
        code: "rate_limit_exceeded",
        retryAfterSeconds: result.retryAfterSeconds,
        rateLimitUnit: unit,
      });
    }
    if (!result.admitted) throw budgetError(result.scope, result.level, worst.amountNano, budgets.find((entry) => entry.scope === result.scope.scope)!.budget, now);

    for (const scope of result.softExceeded) {
      this.deps.log?.(`[tollgate] warning: soft budget ${scope} had not enough left for the worst case of request ${requestId} (a hard budget would have refused it); served anyway`);
      this.deps.onSoftExceeded?.(scope);
    }
    // Budget scopes reserve; a tpm count is held the same way (its entry tells the settle which
    // minute to correct, so it must outlive a long request as a reservation does).
    if (scopes.length > 0 || tokens > 0) this.keeper.hold(requestId);
    const keeper = this.keeper;
    const store = this.deps.store;
    const clock = this.now;
    const log = this.deps.log;
    const ttlMs = this.reservationTtlMs;
    let settled = false;
    const scopeKeys = scopes.map((scope) => scope.key);
    const windowEndsAt = scopes.map((scope) => scope.windowEndsAt);
    const rateScopes = rates.filter((rate) => rate.tpm !== undefined).map((rate) => rate.scope);
    // Settling is idempotent by request id, so a retry after a lost reply cannot count twice;
    // giving up would leave real spend off the budget (the reservation expires on its own, and
    // later requests would spend the same money again). So it retries until the store is back,
    // as the ledger does: 100 ms doubling, then every 30 s.
    const settling = this.settling;
    const closed = () => this.closed;
    const settleUntilDone = async (plan: SettlePlan) => {
      // Tracked from its first attempt: one still waiting on the store at shutdown is tried (or
      // kept) by finishSettling too; settling twice counts once.
      settling.set(plan.requestId, plan);
      for (let attempt = 0; ; attempt++) {
        try {
          await store.settle(plan);
          settling.delete(plan.requestId);
          return;
        } catch (error) {
          // Shutting down: finishSettling hands what is left to the host, which keeps it.
          if (closed()) return;
          if (attempt === SETTLE_RETRIES_BEFORE_WARNING) log?.(`[tollgate] error: settling ${plan.requestId} keeps failing (${(error as Error).message}); retrying until the budget store is back`);
          // Unref'd: a gateway shutting down during an outage does not wait for it.
          await new Promise((resolve) => unrefTimer(setTimeout(resolve, Math.min(100 * 2 ** attempt, MAX_SETTLE_RETRY_DELAY_MS))));
          if (closed()) return;
        }
      }
    };
    return {
      softExceeded: result.softExceeded,
      ...outputBound,
      remainingNano(actualNano) {
        if (scopes.length === 0) return undefined;
        return Math.min(...scopes.map((scope, index) => scope.limitNano - levelTotal(result.levels[index]!) - earlierNano - actualNano));
      },
      async chargeEarlierCall(call, refused = []) {
        if (!capTakes(call, refused)) return false;
        if (scopes.length === 0 && rateScopes.length === 0) {
          earlierNano += call.cost.totalNano;
          return true;
        }
        const at = clock();
        try {
          const held = await store.admit({ requestId: call.requestId, now: at, reservationExpiresAt: at + ttlMs, amountNano: call.cost.totalNano, scopes, rates: [] });
          if (!held.admitted) return false;
        } catch (error) {
          // Fail closed, as admission does: no second call on money that could not be counted.
          log?.(`[tollgate] error: charging ${call.requestId} failed (${(error as Error).message}); not trying another target`);
          return false;
        }
        // Reserved: the money is held from here, so the next call may go; the settle that makes it
        // spent may take its time (retried, like every settle).
        earlierNano += call.cost.totalNano;
        const tokens = totalInputTokens(call.usage) + call.usage.outputTokens;
        void settleUntilDone({ requestId: call.requestId, now: at, scopeKeys, windowEndsAt, actualNano: call.cost.totalNano, tokens, rateScopes });
        return true;
      },
      async settle(record) {
        if (settled) return;
        settled = true;
        keeper.release(requestId);
        await settleUntilDone({
          requestId,
          now: clock(),
          scopeKeys,
          windowEndsAt,
          actualNano: record?.cost.totalNano ?? 0,
          tokens: record ? totalInputTokens(record.usage) + record.usage.outputTokens : 0,
          rateScopes,
          reservedTokens: tokens,
          admittedAt: now,
        });
      },
    };
  }
}

/** A crashed gateway's holds free themselves within two minutes. */
export const DEFAULT_RESERVATION_TTL_SECONDS = 120;

/** A failed settle is retried 100 ms doubling up to this delay, for as long as it takes. */
const MAX_SETTLE_RETRY_DELAY_MS = 30_000;
/** About 25 s of failures (100 ms doubling) before the log says so. */
const SETTLE_RETRIES_BEFORE_WARNING = 8;

const FREE_PASS: Ticket = { softExceeded: [], remainingNano: () => undefined, settle: async () => {}, chargeEarlierCall: async () => true };

const levelTotal = (level: ScopeLevel) => level.spentNano + level.reservedNano;

/** One target of a route, as records name it. */
const targetKey = (provider: string, model: string) => `${provider}\u0000${model}`;

function budgetError(scope: ScopeCharge, level: ScopeLevel, amountNano: number, budget: BudgetConfig, now: number): GatewayError {
  const resets = windowOf(budget, now).resetsAt;
  const inFlight = level.reservedNano > 0 ? ` (and $${formatUsd(level.reservedNano)} held by requests in flight)` : "";
  return new GatewayError(
    "budget_exceeded",
    `budget exceeded for ${scope.scope}: limit $${formatUsd(scope.limitNano)} ${budget.window === "total" ? "in total" : `per ${budget.window}`}, spent $${formatUsd(level.spentNano)}${inFlight}; ` +
      `this request could cost up to $${formatUsd(amountNano)}; ${resets ? `resets at ${resets.toISOString().replace(".000Z", "Z")}` : "a total budget does not reset"}`,
    { code: "budget_exceeded" },
  );
}

function perRequestCapError(capUsd: number, amountNano: number, fittingMaxTokens: number, thinkingBudgetTokens: number | undefined): GatewayError {
  const fix =
    fittingMaxTokens < 0
      ? "the prompt alone could cost more than that: shorten it"
      : fittingMaxTokens === 0
        ? "no max_tokens fits with this prompt: shorten it"
        : `send max_tokens of at most ${fittingMaxTokens}${thinkingFix(fittingMaxTokens, thinkingBudgetTokens)}`;
  return new GatewayError("invalid_request", `this request could cost up to $${formatUsd(amountNano)}, over this route's $${capUsd} per-request cap: ${fix}`, {
    param: "max_tokens",
    code: "max_cost_per_request_exceeded",
  });
}

/**
 * Claude thinks within max_tokens: a budget_tokens at or above the max_tokens that fits would
 * have the suggestion refused in turn ("must be below max_tokens"). Was: the suggestion alone.
 */
function thinkingFix(fittingMaxTokens: number, budgetTokens: number | undefined): string {
  if (budgetTokens === undefined || budgetTokens < fittingMaxTokens) return "";
  if (fittingMaxTokens <= MIN_THINKING_BUDGET) return `, without thinking (its least budget_tokens, ${MIN_THINKING_BUDGET}, must be below max_tokens)`;
  return `, with thinking.budget_tokens below it`;
}
