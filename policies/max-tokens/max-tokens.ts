import { z } from "zod";
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import { MIN_THINKING_BUDGET, thinkingBudget, type ChatRequest } from "../../src/model/chat-request.ts";
import type { Policy, PolicyLog, PolicyTarget } from "../policy.ts";

// Output tokens are the expensive ones, and max_tokens is their ceiling. The route may give a
// default (for clients that send none) and a cap (clamp, or reject with the cap named). Whatever
// the route says, no request asks a model for more than the model can give: the provider would
// answer that with a 400.

export const maxTokensOptionsSchema = z
  .strictObject({
    /** Used when the client sent no max_tokens / max_completion_tokens. */
    default: z.number().int().positive().optional(),
    /** The most a client may ask for on this route. */
    cap: z.number().int().positive().optional(),
    /** `clamp` lowers a larger request to the cap; `reject` answers 400 naming the cap. */
    onExceed: z.enum(["clamp", "reject"], { error: 'write "clamp" or "reject"' }).default("clamp"),
  })
  .refine((options) => options.default === undefined || options.cap === undefined || options.default <= options.cap, {
    error: "default is above cap: lower default to at most cap",
    path: ["default"],
  })
  // Without a cap there is nothing to exceed: a route that meant to refuse large requests would not.
  .refine((options) => options.onExceed !== "reject" || options.cap !== undefined, {
    error: 'onExceed needs a cap: add cap (e.g. 1024), or remove onExceed',
    path: ["onExceed"],
  });

export type MaxTokensOptions = z.output<typeof maxTokensOptionsSchema>;

export function maxTokensPolicy(options?: MaxTokensOptions): Policy {
  return {
    name: "maxTokens",
    apply(request, log) {
      refuseThinkingAboveMaxTokens(request);
      let maxTokens = request.maxTokens;
      // A request that names no max_tokens is held to the cap too: leaving the field out must not
      // be a way around it (OpenAI would generate without limit, Anthropic up to the adapter's 4096).
      const fallback = options?.default ?? options?.cap;
      if (maxTokens === undefined && fallback !== undefined) {
        maxTokens = fallback;
        log.notes.push(`max_tokens=default:${maxTokens}`);
      }
      const cap = options?.cap;
      if (maxTokens !== undefined && cap !== undefined && maxTokens > cap) {
        if (options?.onExceed === "reject") {
          // The field the client sent: an o-series client that sent max_completion_tokens cannot send max_tokens.
          const field = request.maxTokensField ?? "max_tokens";
          throw new GatewayError("invalid_request", `${field} ${maxTokens} is above this route's cap of ${cap}: send ${field} of at most ${cap}`, {
            param: field,
            code: "max_tokens_above_cap",
          });
        }
        log.notes.push(`max_tokens=clamped:${maxTokens}->${cap}`);
        const scaled = scaleThinkingBudget(request, maxTokens, cap, log, "this route holds it");
        maxTokens = cap;
        return { ...scaled, maxTokens };
      }
      return maxTokens === request.maxTokens ? request : { ...request, maxTokens };
    },
    adaptToTarget(request, target, log, context) {
      const modelMax = findModelLimits(target.providerType, target.model).maxOutputTokens;
      let next = request;
      // Claude requires max_tokens, where an OpenAI client that sends none expects the model's
      // own limit. tollgate sends 4,096 (the bound admission reserved for), and says so: an
      // answer cut there reads finish_reason "length" with nothing else telling the client why.
      if (target.providerType === "anthropic" && next.maxTokens === undefined) {
        const sent = Math.min(DEFAULT_ANTHROPIC_MAX_TOKENS, modelMax ?? DEFAULT_ANTHROPIC_MAX_TOKENS);
        log.notes.push(`max_tokens=claude-default:${sent}`);
        next = { ...next, maxTokens: sent };
      }
      if (modelMax !== undefined && next.maxTokens !== undefined && next.maxTokens > modelMax) {
        log.notes.push(`max_tokens=model-max:${next.maxTokens}->${modelMax}`);
        if (target.providerType === "anthropic") next = scaleThinkingBudget(next, next.maxTokens!, modelMax, log, `${target.model} allows at most`);
        next = { ...next, maxTokens: modelMax };
      }
      return fitThinkingBudget(next, target, log, context.route);
    },
  };
}


/**
 * With interleaved thinking (its beta, with tools), the budget is for all of a turn's thinking
 * between tool calls, and may exceed max_tokens (Anthropic's extended-thinking docs).
 */
function thinksBetweenToolCalls(request: ChatRequest): boolean {
  return Boolean(request.tools?.length) && (request.anthropicBetas ?? []).some((beta) => beta.startsWith("interleaved-thinking-"));
}

/** Claude thinks within max_tokens: a client's budget at or above its own max_tokens is its mistake. */
function refuseThinkingAboveMaxTokens(request: ChatRequest): void {
  const budget = thinkingBudget(request);
  if (budget === undefined || request.maxTokens === undefined || budget < request.maxTokens || thinksBetweenToolCalls(request)) return;
  throw new GatewayError("invalid_request", `thinking.budget_tokens ${budget} must be below max_tokens ${request.maxTokens}: lower budget_tokens or raise max_tokens`, {
    param: "thinking.budget_tokens",
  });
}

/**
 * Claude thinks within max_tokens, then answers in what is left. A cap that lowers max_tokens
 * lowers the thinking budget in the same proportion, so the answer keeps its share: a client
 * asking for 16,000 tokens with 10,000 of thinking, held to 8,000, thinks for 5,000 and has 3,000
 * to answer in (not 7,999 and 1). Never below Claude's least budget; fitThinkingBudget then checks
 * that the result still fits.
 */
function scaleThinkingBudget(request: ChatRequest, from: number, to: number, log: PolicyLog, why: string): ChatRequest {
  const budget = thinkingBudget(request);
  if (budget === undefined) return request;
  const scaled = Math.max(MIN_THINKING_BUDGET, Math.floor((budget * to) / from));
  if (scaled >= budget) return request;
  log.notes.push(`thinking.budget_tokens=scaled:${budget}->${scaled}`);
  log.warnings.push(`thinking.budget_tokens ${budget} was lowered to ${scaled} with max_tokens (${from} to ${to}, as ${why}), keeping the answer's share`);
  return { ...request, thinking: { ...request.thinking!, budget_tokens: scaled } };
}

/**
 * A cap (the route's, or the model's own maximum) that lowered max_tokens to or under the thinking
 * budget lowers the budget with it: thinking is output, which the cap is there to bound. Below
 * Claude's least budget there is no thinking that fits, and the client is told what would.
 */
function fitThinkingBudget(request: ChatRequest, target: PolicyTarget, log: PolicyLog, route: string): ChatRequest {
  const budget = thinkingBudget(request);
  if (target.providerType !== "anthropic" || budget === undefined || request.maxTokens === undefined || budget < request.maxTokens || thinksBetweenToolCalls(request)) return request;
  const fitted = request.maxTokens - 1;
  if (fitted < MIN_THINKING_BUDGET) {
    throw new GatewayError(
      "invalid_request",
      `thinking needs max_tokens above its budget of at least ${MIN_THINKING_BUDGET} tokens, and route "${route}" holds ${target.model}'s max_tokens to ${request.maxTokens}: send the request without thinking, or have the route's cap raised`,
      { param: "thinking.budget_tokens" },
    );
  }
  log.notes.push(`thinking.budget_tokens=clamped:${budget}->${fitted}`);
  log.warnings.push(`thinking.budget_tokens ${budget} was lowered to ${fitted}, under max_tokens ${request.maxTokens} as this route holds it`);
  return { ...request, thinking: { ...request.thinking!, budget_tokens: fitted } };
}
