import { findModelPrice, type FoundPrice, type PricedProvider } from "./find-model-price.ts";

// OpenAI bills a call at the rates of the tier that served it, and its answer says which
// (`service_tier`). tollgate asks for none unless told to, so a call runs at the project's
// default tier, which the project's settings may make "priority". The price follows what the
// answer says; what was asked only where no answer says (a call cut before it, request-meter.ts).

/** The tiers billed at the standard rates ("standard" is how some servers spell "default"). */
const STANDARD_TIERS = new Set(["default", "standard"]);

/**
 * The price of a call served at `tier`: the standard price where it says none or a standard tier,
 * the priority price where the list has one, else undefined (a tier tollgate cannot price).
 */
export function isStandardTier(tier: string | undefined): boolean {
  return tier === undefined || STANDARD_TIERS.has(tier);
}

export function priceAtTier(price: FoundPrice, tier: string | undefined): FoundPrice | undefined {
  if (isStandardTier(tier)) return price;
  if (tier === "priority" && price.priority) return price.priority;
  return undefined;
}

/**
 * The price a provider's calls will be billed at, before any answer says: the priority price for
 * an OpenAI provider pinned to that tier (where the list has it), else the standard one. For the
 * worst case budgets reserve and for ranking a route's targets by cost.
 */
export function pinnedTierPrice(provider: { type: string; serviceTier?: string } | undefined, price: FoundPrice | undefined): FoundPrice | undefined {
  return provider?.type === "openai" && provider.serviceTier === "priority" ? (price?.priority ?? price) : price;
}

export function unpricedTierWarning(tier: string): string {
  return (
    `the provider served this call at its "${tier}" tier, billed at other rates than the standard ones this cost is computed at ` +
    `(tollgate has "priority" prices only for the models of its bundled list); set the OpenAI project's default service tier to "default", ` +
    `or add the provider's "serviceTier": "default" in the config, to keep its calls at the prices tollgate has`
  );
}

/**
 * A provider pinned to "priority" whose routed models tollgate has no priority price for (priced
 * in config, or not in the bundled list): their calls would be recorded, and reserved by budgets,
 * at the standard price, below the invoice.
 */
export function unpricedPriorityWarnings(providerName: string, provider: PricedProvider & { serviceTier?: string }, routedModels: readonly string[]): string[] {
  if (provider.type !== "openai" || provider.serviceTier !== "priority") return [];
  return [...new Set(routedModels)].flatMap((model) => {
    const price = findModelPrice(provider, model);
    if (!price || price.priority) return [];
    return [
      `providers.${providerName}.serviceTier is "priority", but tollgate has no priority price for ${model} (${price.source === "config" ? "it is priced in config" : "its list has none"}): ` +
        `its calls are recorded and reserved at the standard price, below what OpenAI bills; price ${model} in config at the priority rates, or write "serviceTier": "default"`,
    ];
  });
}
