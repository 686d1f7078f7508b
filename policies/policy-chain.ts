import { z } from "zod";
import type { ChatRequest } from "../src/model/chat-request.ts";
import type { KeyValueStore } from "../src/store/key-value-store.ts";
import { brevityOptionsSchema, brevityPolicy } from "./brevity/brevity.ts";
import { formatOptionsSchema, formatPolicy } from "./format/format.ts";
import { maxTokensOptionsSchema, maxTokensPolicy } from "./max-tokens/max-tokens.ts";
import { emptyLog, type Policy, type PolicyContext, type PolicyLog, type PolicyTarget } from "./policy.ts";
import { promptCacheOptionsSchema, promptCachePolicy } from "./prompt-cache/prompt-cache.ts";
import { ResponseCache, responseCacheOptionsSchema } from "./response-cache/response-cache.ts";
import { samplingOptionsSchema, samplingPolicy } from "./sampling/sampling.ts";
import { stopOptionsSchema, stopPolicy } from "./stop/stop.ts";

// A route's policies, in the order its config lists them. The guards that keep a request
// acceptable to its target (model's max output, stop-sequence limits, unsupported sampling) and
// format-first for a request's own response_format run on every route, configured or not. The
// response cache is not in the chain: it keys on the request after all of it.

export const routePoliciesSchema = z.strictObject({
  maxTokens: maxTokensOptionsSchema.optional(),
  stop: stopOptionsSchema.optional(),
  format: formatOptionsSchema.optional(),
  brevity: brevityOptionsSchema.optional(),
  sampling: samplingOptionsSchema.optional(),
  promptCache: promptCacheOptionsSchema.optional(),
  responseCache: responseCacheOptionsSchema.optional(),
});

export type RoutePolicies = z.output<typeof routePoliciesSchema>;
type PolicyName = keyof RoutePolicies;

export type Shaped = { request: ChatRequest; log: PolicyLog };

export class PolicyChain {
  readonly responseCache: ResponseCache | undefined;

  private constructor(
    private readonly policies: Policy[],
    responseCache: ResponseCache | undefined,
  ) {
    this.responseCache = responseCache;
  }

  static forRoute(policies: RoutePolicies | undefined, order: readonly string[], store: KeyValueStore): PolicyChain {
    const configured = policies ?? {};
    const build: Record<Exclude<PolicyName, "responseCache">, () => Policy | undefined> = {
      maxTokens: () => maxTokensPolicy(configured.maxTokens),
      stop: () => stopPolicy(configured.stop),
      format: () => formatPolicy(configured.format),
      sampling: () => samplingPolicy(configured.sampling),
      brevity: () => (configured.brevity ? brevityPolicy(configured.brevity) : undefined),
      promptCache: () => (configured.promptCache ? promptCachePolicy(configured.promptCache) : undefined),
    };
    // The config's order first, then the always-on ones it did not name. The prompt cache last,
    // wherever the config names it: it marks and counts the prompt as it will be sent, and the
    // format policy writes a client's JSON Schema into Claude's system prompt (per target).
    const names = [...new Set([...order.filter((name) => name !== "promptCache"), "maxTokens", "stop", "format", "sampling", "promptCache"])].filter(
      (name): name is keyof typeof build => name in build,
    );
    const chain = names.flatMap((name) => build[name]() ?? []);
    return new PolicyChain(chain, configured.responseCache ? new ResponseCache(store, configured.responseCache) : undefined);
  }

  /** Once per request, before routing. May throw a 400 naming what to change. */
  async apply(request: ChatRequest, context: PolicyContext): Promise<Shaped> {
    const log = emptyLog();
    let shaped = request;
    for (const policy of this.policies) if (policy.apply) shaped = await policy.apply(shaped, log, context);
    return { request: shaped, log };
  }

  /** Once per upstream attempt: what this target accepts. */
  async adaptToTarget(request: ChatRequest, target: PolicyTarget, context: PolicyContext): Promise<Shaped> {
    const log = emptyLog();
    let adapted = request;
    for (const policy of this.policies) if (policy.adaptToTarget) adapted = await policy.adaptToTarget(adapted, target, log, context);
    return { request: adapted, log };
  }
}
