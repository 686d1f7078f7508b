import { z } from "zod";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy } from "../policy.ts";

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
  });

export type MaxTokensOptions = z.output<typeof maxTokensOptionsSchema>;

export function maxTokensPolicy(options?: MaxTokensOptions): Policy {
  return {
    name: "maxTokens",
    apply(request, log) {
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
          throw new GatewayError("invalid_request", `max_tokens ${maxTokens} is above this route's cap of ${cap}: send max_tokens of at most ${cap}`, {
            param: "max_tokens",
            code: "max_tokens_above_cap",
          });
        }
        log.notes.push(`max_tokens=clamped:${maxTokens}->${cap}`);
        maxTokens = cap;
      }
      return maxTokens === request.maxTokens ? request : { ...request, maxTokens };
    },
    adaptToTarget(request, target, log) {
      const modelMax = findModelLimits(target.providerType, target.model).maxOutputTokens;
      if (modelMax === undefined || request.maxTokens === undefined || request.maxTokens <= modelMax) return request;
      log.notes.push(`max_tokens=model-max:${request.maxTokens}->${modelMax}`);
      return { ...request, maxTokens: modelMax };
    },
  };
}
