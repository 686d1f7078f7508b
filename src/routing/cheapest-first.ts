import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { PriceBook } from "../metering/price-book.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { DEFAULT_OUTPUT_BOUND, promptBytes } from "../budgets/worst-case-cost.ts";
import { computeCost } from "../pricing/compute-cost.ts";
import { findModelLimits } from "../pricing/find-model-price.ts";
import type { RouteObserver } from "./route-chat.ts";
import { TargetLatency } from "./target-latency.ts";

// The "cheapest" strategy: the same fallback loop as "fallback", over the route's targets put in
// order for each request: first those that meet the route's latency goal, cheapest first for this
// request; then those that recently missed it, fastest first. A target that fails still falls
// back to the next, so a slow or dear target is a fallback, never dropped.
//
// What "cheapest" weighs is this request's expected cost on each target: its prompt at about 4
// bytes per token (no tokenizer on the request path; the ranking needs the scale, not the exact
// count), and its max_tokens of output (4,096 when it names none: the same length for every
// target, since an answer's length depends on the question, not on which model may write more;
// held to a model's own maximum), at the target's prices, long-context tier and GPU-hour rates
// included.
// Cache discounts are not guessed at. An unpriced target's cost is unknown: it comes after the
// priced ones.

/** Roughly what one token of English or code takes in UTF-8, for ranking only. */
const BYTES_PER_TOKEN = 4;

type Target = RouteConfig["targets"][number];

/** What ordering weighs about one target for one request. */
export type TargetWeight = { costNano: number | undefined; latencyMs: number | undefined };

/**
 * `targets` in the order to try them: within the goal (or not measured yet) by cost, unpriced
 * last; then over the goal by latency. Ties keep the route's own order.
 */
export function orderTargets<T>(targets: readonly T[], weigh: (target: T) => TargetWeight, goalMs: number | undefined): T[] {
  const weighed = targets.map((target, index) => ({ target, index, ...weigh(target) }));
  const meets = (entry: (typeof weighed)[number]) => goalMs === undefined || entry.latencyMs === undefined || entry.latencyMs <= goalMs;
  const byCost = weighed.filter(meets).sort((a, b) => (a.costNano ?? Infinity) - (b.costNano ?? Infinity) || a.index - b.index);
  const byLatency = weighed.filter((entry) => !meets(entry)).sort((a, b) => a.latencyMs! - b.latencyMs! || a.index - b.index);
  return [...byCost, ...byLatency].map((entry) => entry.target);
}

/** Puts a "cheapest" route's targets in order per request, and hears how long each took. */
export class CheapestFirst {
  constructor(
    private readonly config: ResolvedConfig,
    private readonly prices: PriceBook,
    readonly latency = new TargetLatency(),
  ) {}

  /** The route to try for this request: `route` itself unless its strategy is "cheapest". */
  routeFor(request: ChatRequest, route: RouteConfig): RouteConfig {
    if (route.strategy !== "cheapest" || route.targets.length < 2) return route;
    const inputTokens = Math.ceil(promptBytes(request) / BYTES_PER_TOKEN);
    const streamed = request.stream === true;
    const targets = orderTargets(
      route.targets,
      (target) => ({ costNano: this.expectedCostNano(target, request, inputTokens), latencyMs: this.latency.median(target.provider, target.model, streamed) }),
      route.latencyGoalMs,
    );
    return { ...route, targets };
  }

  /**
   * A request's record: how long its target took to the first token (a stream) or to the whole
   * answer, as the meter measured it. The record's figure, not the router's: a stream committed
   * on silence (keep-alives) is committed before its first token.
   */
  heard(record: CostRecord): void {
    // A response-cache hit called no provider: its upstreamTtftMs is null.
    if (record.status !== "ok" || record.upstreamTtftMs === null) return;
    this.latency.observe(record.provider, record.model, record.stream, record.upstreamTtftMs);
  }

  /**
   * `observer`, for a "cheapest" route also noting each call that ran into its provider's
   * deadline as that slow: a target that keeps timing out has missed the goal, though it never
   * answered. (A 429 or a 5xx says nothing of speed.)
   */
  watching(observer: RouteObserver, route: RouteConfig, streamed: boolean): RouteObserver {
    if (route.strategy !== "cheapest") return observer;
    let startedAt = 0;
    return {
      attemptStarted: (target, request, at) => {
        startedAt = at;
        return observer.attemptStarted(target, request, at);
      },
      firstChunk: (at) => observer.firstChunk?.(at),
      attemptFailed: (target, error, clientLeft) => {
        if (error.kind === "timeout" && !clientLeft) this.latency.observe(target.model.providerName, target.modelName, streamed, performance.now() - startedAt);
        observer.attemptFailed(target, error, clientLeft);
      },
      ...(observer.targetRefused ? { targetRefused: (target) => observer.targetRefused!(target) } : {}),
      ...(observer.mayTryNext ? { mayTryNext: () => observer.mayTryNext!() } : {}),
    };
  }

  /** What `request` is expected to cost on `target` (see the top of this file); undefined: unpriced. */
  expectedCostNano(target: Target, request: ChatRequest, inputTokens = Math.ceil(promptBytes(request) / BYTES_PER_TOKEN)): number | undefined {
    const provider = this.config.providers[target.provider];
    const price = this.prices.expectedPriceOf(target.provider, target.model);
    if (!price) return undefined;
    const type = provider?.type;
    const limits = type ? findModelLimits(type, target.model) : {};
    const outputTokens = Math.min(request.maxTokens ?? DEFAULT_OUTPUT_BOUND, limits.maxOutputTokens ?? Infinity);
    return computeCost({ inputTokens, outputTokens }, price).totalNano;
  }
}
