import type { ChatRequest } from "../model/chat-request.ts";
import type { Usage } from "../model/usage.ts";
import type { CostBreakdown } from "./cost-record.ts";
import { computeCost } from "../pricing/compute-cost.ts";
import { isPricedGeo, priceInGeo, PRICED_INFERENCE_GEOS_TEXT } from "../pricing/inference-geo.ts";
import { priceAtTier, unpricedTierWarning } from "../pricing/service-tier.ts";
import { unpricedWarning, type PriceBook } from "./price-book.ts";

// What one call costs, from its usage and from where and at which tier it ran: as its answer
// says, or, for a call cut before its answer said (a client gone during a long prefill, a
// deadline), as the call asked. Was: the global, standard price, 10% under Anthropic's bill for
// "us" and 41% under OpenAI's priority gpt-4o.

export type CallToPrice = {
  providerName: string;
  model: string;
  /** The model the answer names, where it named one (a dated snapshot may have its own price). */
  responseModel: string | undefined;
  request: Pick<ChatRequest, "inferenceGeo" | "openAIServiceTier">;
  /** What the answer said, where it said it. */
  heard: { inferenceGeo: string | undefined; serviceTier: string | undefined };
  usage: Required<Usage>;
};

export type PricedCall = { cost: CostBreakdown | undefined; inferenceGeo: string | undefined; serviceTier: string | undefined; warnings: string[] };

/** The call's cost (undefined: no price, the record is unpriced), where and at which tier it ran, and what the record should warn of. */
export function priceCall(prices: PriceBook, call: CallToPrice): PricedCall {
  const asked = prices.askedFor(call.providerName, call.request);
  const inferenceGeo = call.heard.inferenceGeo ?? asked.geo;
  // OpenAI serves a prompt over 128k tokens at "default" whatever was asked (bundled-prices.ts).
  const servedAsAsked = asked.tier !== "priority" || promptTokens(call.usage) <= PRIORITY_MAX_PROMPT_TOKENS;
  const serviceTier = call.heard.serviceTier ?? (servedAsAsked ? asked.tier : undefined);
  const price = prices.priceOf(call.providerName, call.model, call.responseModel);
  if (!price) return { cost: undefined, inferenceGeo, serviceTier, warnings: [unpricedWarning(call.providerName, call.model)] };
  const atTier = priceAtTier(price, serviceTier);
  prices.heardTier(call.providerName, call.heard.serviceTier);
  const warnings: string[] = [];
  // Priced at the standard, global rates where the call ran at a tier or in a place tollgate has no price for.
  if (!atTier && serviceTier) warnings.push(unpricedTierWarning(serviceTier));
  if (inferenceGeo && !isPricedGeo(inferenceGeo)) warnings.push(unpricedGeoWarning(inferenceGeo));
  return { cost: computeCost(call.usage, priceInGeo(atTier ?? price, inferenceGeo)), inferenceGeo, serviceTier, warnings };
}

/** A geography the answer says inference ran in (a workspace's default) with no price of tollgate's. */
function unpricedGeoWarning(geo: string): string {
  return `the provider says inference ran in "${geo}", which may be billed above the global price this cost is computed at (tollgate knows the prices of ${PRICED_INFERENCE_GEOS_TEXT})`;
}

/** The most prompt tokens OpenAI serves at its priority tier; larger prompts run at "default". */
const PRIORITY_MAX_PROMPT_TOKENS = 128_000;

/** Every token of the prompt, cached or not. */
const promptTokens = (usage: Required<Usage>) => usage.inputTokens + usage.cacheReadTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens;
