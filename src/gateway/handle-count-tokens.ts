import type { Context } from "hono";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { parseAnthropicCountTokensRequest } from "../dialects/anthropic/parse-anthropic-request.ts";
import { countRequestTokens, type TokenCounter } from "../metering/token-counter.ts";
import type { CheapestFirst } from "../routing/cheapest-first.ts";
import type { ProviderSlot } from "../routing/create-chat-models.ts";
import { noTargetError, usableTargets } from "../routing/route-chat.ts";
import { findRoute } from "./find-route.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { jsonResponse } from "./json-response.ts";
import { readJsonBody } from "./read-json-body.ts";

// POST /v1/messages/count_tokens: Anthropic's token counting, which the Anthropic SDK's
// `messages.countTokens()` calls (and agents that manage their context window call often). It
// answers the input tokens the request would cost on the first target its route would try:
//   - an Anthropic target counts them itself (its count_tokens endpoint, which is free);
//   - other targets have no such endpoint: tollgate counts with its tokenizer, as it does for a
//     usage the provider never reported, and says so with `x-tollgate-estimated: true`.
// Counting spends nothing, so it reserves no budget, takes nothing from a rate limit and leaves
// no cost record. The route's policies are not applied: their lines (a format instruction, a
// brevity line) add a few tokens the count does not hold.

export type CountTokensDeps = {
  config: ResolvedConfig;
  slots: Map<string, ProviderSlot>;
  /** Orders a "cheapest" route's targets for this request, as a chat request would be. */
  order: CheapestFirst;
  counter: TokenCounter;
};

export function createCountTokensHandler({ config, slots, order, counter }: CountTokensDeps) {
  return async function handleCountTokens(c: Context<GatewayEnv>): Promise<Response> {
    const request = parseAnthropicCountTokensRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes));
    const route = order.routeFor(request, findRoute(config, c.get("caller"), request.route));
    const target = usableTargets(route, slots).next().value;
    if (!target) throw noTargetError(route, slots);

    const provider = target.model.countTokens
      ? await target.model.countTokens(request, target.modelName, c.req.raw.signal)
      : undefined;
    const inputTokens = provider ?? (await countRequestTokens(counter, request));
    return jsonResponse({ input_tokens: inputTokens }, 200, c.get("requestId"), {
      "x-tollgate-route": request.route,
      "x-tollgate-provider": target.model.providerName,
      "x-tollgate-model": target.modelName,
      ...(provider === undefined ? { "x-tollgate-estimated": "true" } : {}),
    });
  };
}
