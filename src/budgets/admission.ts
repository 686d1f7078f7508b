import type { Caller } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { PriceBook } from "../metering/price-book.ts";
import { hasCacheMarks, MIN_THINKING_BUDGET, thinkingBudget, type ChatRequest } from "../model/chat-request.ts";
import { findModelLimits } from "../pricing/find-model-price.ts";
import { formatUsd, usdToNano } from "../pricing/format-usd.ts";
import { priceInGeo } from "../pricing/inference-geo.ts";
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import type { AdmissionStore, AdmitPlan, RateCheck, ScopeCharge, ScopeLevel, SettlePlan } from "./admission-store.ts";
import { cappedPass, FREE_PASS, RequestCap, reservedTicket, type Ticket } from "./admission-ticket.ts";
import type { BudgetConfig } from "./budget-config.ts";
import { windowKey, windowOf } from "./budget-window.ts";
import { ReservationKeeper } from "./reservation-keeper.ts";
import { Settlements } from "./settlements.ts";
import { DEFAULT_OUTPUT_BOUND, worstCaseCost, type WorstCase } from "./worst-case-cost.ts";

// Admission, between the policies and the router: the per-request cap, the rate limits, and the
// budgets of every scope that applies (route, key, team) in one atomic store operation. The
// ticket it returns (admission-ticket.ts) settles the reservation with the actual cost once the
// record is known.

export type BudgetScope = { scope: string; budget: BudgetConfig };

export type AdmissionDeps = {
  config: ResolvedConfig;
  store: AdmissionStore;
  prices: PriceBook;
  now?: () => number;
  log?: (line: string) => void;
  onSoftExceeded?: (scope: string) => void;
};

export type { Ticket };

export type AdmitInput = { requestId: string; caller: Caller; routeName: string; route: RouteConfig; request: ChatRequest };

type Target = RouteConfig["targets"][number];

/** What a request can cost on the route's callable targets, and the output bounds that assumes. */
type PricedRoute = { worst: WorstCase; unknownMaximum: boolean; largestOutputBound: number };

export class Admission {
  private readonly now: () => number;
  /**
   * How long a reservation outlives the last renewal of its gateway. The keeper renews it every
   * third of this while its request runs, so it need not cover the longest request.
   */
  private readonly reservationTtlMs: number;
  /** Renews the reservations of requests in flight, so only a dead gateway's expire. */
  readonly keeper: ReservationKeeper;
  /** Settlements retried until the store takes them, and handed over at shutdown. */
  private readonly settlements: Settlements;
  private lastAdmitFailed: "unreachable" | "full" | false = false;

  constructor(private readonly deps: AdmissionDeps) {
    this.now = deps.now ?? Date.now;
    this.reservationTtlMs = (deps.config.server.reservationTtlSeconds ?? DEFAULT_RESERVATION_TTL_SECONDS) * 1000;
    this.keeper = new ReservationKeeper(deps.store, this.reservationTtlMs, this.now, deps.log);
    this.settlements = new Settlements(deps.store, deps.log);
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

  /** At shutdown: the settlements still retrying, tried once more; those that failed, for the host to keep. */
  finishSettling(): Promise<SettlePlan[]> {
    return this.settlements.finish();
  }

  async admit({ requestId, caller, routeName, route, request }: AdmitInput): Promise<Ticket> {
    // A provider marked optional whose key is missing is never called (the router skips it), so
    // its price is no part of what this request can cost. Was: weighed all the same, so a cheap
    // request on a route whose dear target had no key got a 400 or a 402, and held that price.
    const callable = route.targets.filter((target) => !this.deps.config.providers[target.provider]?.unavailableReason);
    // Nothing can be called: the router answers with the key to set; nothing to reserve or count.
    if (callable.length === 0) return FREE_PASS;
    const now = this.now();
    const { worst, unknownMaximum, largestOutputBound } = this.priceTargets(request, route, callable);

    const capNano = route.maxCostPerRequestUsd !== undefined ? usdToNano(route.maxCostPerRequestUsd) : undefined;
    if (capNano !== undefined && worst.amountNano > capNano) {
      throw perRequestCapError(route.maxCostPerRequestUsd!, worst.amountNano, worst.fittingMaxTokens(capNano), thinkingBudget(request));
    }
    const cap = new RequestCap(capNano, callable, worst.perTargetNano);

    const budgets = this.scopesFor(caller, routeName);
    // What the worst case assumed for a request that named no max_tokens, when a budget or the
    // per-request cap relies on it: the request is then held to it.
    const holds = budgets.length > 0 || route.maxCostPerRequestUsd !== undefined;
    const outputBound = holds && unknownMaximum && request.maxTokens === undefined ? DEFAULT_OUTPUT_BOUND : undefined;
    const scopes: ScopeCharge[] = budgets.map(({ scope, budget }) => {
      const window = windowOf(budget, now);
      return { key: windowKey(scope, window), scope, limitNano: usdToNano(budget.usd), mode: budget.mode, windowEndsAt: window.resetsAt?.getTime() ?? 0 };
    });
    const rates: RateCheck[] = [];
    if (route.rateLimit) rates.push({ scope: `route:${routeName}`, ...route.rateLimit });
    if (caller.kind === "key" && caller.key.rateLimit) rates.push({ scope: `key:${caller.key.id}`, ...caller.key.rateLimit });
    if (scopes.length === 0 && rates.length === 0) {
      if (capNano === undefined) return { ...FREE_PASS, ...(outputBound !== undefined ? { outputBound } : {}) };
      return cappedPass(cap, outputBound);
    }

    // Counted against tokens-per-minute limits until the settle knows the real figure.
    const tokens = rates.some((rate) => rate.tpm !== undefined) ? worst.inputBound + largestOutputBound : 0;
    const plan = { requestId, now, reservationExpiresAt: now + this.reservationTtlMs, amountNano: worst.amountNano, scopes, rates, tokens };
    const { levels, softExceeded } = await this.reserve(plan, budgets);

    for (const scope of softExceeded) {
      this.deps.log?.(`[tollgate] warning: soft budget ${scope} had not enough left for the worst case of request ${requestId} (a hard budget would have refused it); served anyway`);
      this.deps.onSoftExceeded?.(scope);
    }
    // Budget scopes reserve; a tpm count is held the same way (its entry tells the settle which
    // minute to correct, so it must outlive a long request as a reservation does).
    if (scopes.length > 0 || tokens > 0) this.keeper.hold(requestId);
    return reservedTicket({ requestId, admittedAt: now, scopes, levels, rates, reservedTokens: tokens, softExceeded, outputBound }, cap, {
      store: this.deps.store,
      keeper: this.keeper,
      settlements: this.settlements,
      now: this.now,
      reservationTtlMs: this.reservationTtlMs,
      log: this.deps.log,
    });
  }

  /** The worst case of the request on each callable target, priced as that target bills it. */
  private priceTargets(request: ChatRequest, route: RouteConfig, callable: readonly Target[]): PricedRoute {
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
    return { worst, unknownMaximum, largestOutputBound };
  }

  /**
   * Every budget and rate limit checked, and the worst case reserved, in one atomic store
   * operation. A refusal is the client's 429 (a rate limit) or 402 (a budget); a store that
   * cannot be reached, or is full, a 503: fail closed, a budget that cannot be checked is not
   * spent blindly.
   */
  private async reserve(plan: AdmitPlan, budgets: readonly BudgetScope[]): Promise<{ levels: ScopeLevel[]; softExceeded: string[] }> {
    const result = await this.deps.store
      .admit(plan)
      .then((answer) => {
        this.lastAdmitFailed = false;
        return answer;
      })
      .catch((error: Error) => {
        // Redis past its maxmemory under noeviction answers every write "OOM command not allowed …":
        // reached, but full. Was told as unreachable, which sent operators to the network.
        const full = error.message.startsWith("OOM ");
        this.lastAdmitFailed = full ? "full" : "unreachable";
        this.deps.log?.(`[tollgate] error: budget store ${full ? "full" : "unreachable"} (${error.message}); refusing ${plan.requestId}`);
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
    if (!result.admitted) throw budgetError(result.scope, result.level, plan.amountNano, budgets.find((entry) => entry.scope === result.scope.scope)!.budget, plan.now);
    return result;
  }
}

/** A crashed gateway's holds free themselves within two minutes. */
export const DEFAULT_RESERVATION_TTL_SECONDS = 120;

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
