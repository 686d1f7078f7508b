import type { ResolvedProvider } from "../config/resolve-config.ts";
import { findModelPrice, type FoundPrice } from "../pricing/find-model-price.ts";
import { pinnedTierPrice } from "../pricing/service-tier.ts";

// The prices of the configured providers, looked up once per (provider, model, answering model)
// and then kept: a request pays a Map lookup, not a table walk. A model with no price is warned
// about once per process, loudly, and every record of it is flagged `unpriced`.

export class PriceBook {
  private readonly found = new Map<string, FoundPrice | null>();
  /** Provider and model pairs already warned about (admission and the meter look each up). */
  private readonly warned = new Set<string>();
  /** OpenAI providers not pinned to a tier whose project was seen serving calls at "priority" on its own. */
  private readonly servedAtPriority = new Set<string>();

  constructor(
    private readonly providers: Record<string, ResolvedProvider>,
    private readonly log: (line: string) => void = () => {},
  ) {}

  priceOf(providerName: string, model: string, responseModel?: string): FoundPrice | undefined {
    const cacheKey = `${providerName}\u0000${model}\u0000${responseModel ?? ""}`;
    let price = this.found.get(cacheKey);
    if (price === undefined) {
      const provider = this.providers[providerName];
      price = (provider && findModelPrice(provider, model, responseModel)) ?? null;
      // The answering model's name comes from the provider: bound what a server's whims can add.
      if (this.found.size >= 10_000) this.found.clear();
      this.found.set(cacheKey, price);
      const warning = `${providerName}\u0000${model}`;
      if (!price && !this.warned.has(warning) && this.warned.size < 10_000) {
        this.warned.add(warning);
        this.log(`[tollgate] warning: ${unpricedWarning(providerName, model)}`);
      }
    }
    return price ?? undefined;
  }

  /**
   * The price a call to this provider will be billed at, before its answer says (the worst case
   * budgets reserve, the cost `cheapest` ranks by): the priority price for an OpenAI provider
   * pinned to that tier, or seen answering at it unasked (its project's default tier), else the
   * standard one. Was: the standard price until the config pinned the tier, so a project that
   * defaults to priority had every reservation 41% (gpt-4o) under its call's cost.
   */
  expectedPriceOf(providerName: string, model: string): FoundPrice | undefined {
    const provider = this.providers[providerName];
    const tier = this.servedAtPriority.has(providerName) ? { type: "openai", serviceTier: "priority" } : provider;
    return pinnedTierPrice(tier, this.priceOf(providerName, model));
  }

  /**
   * Where and at which tier a call to this provider runs before its answer says: what a call cut
   * before its answer is billed at. The request's `inference_geo` (only Claude is asked it, and
   * honours it); "priority" for an OpenAI provider pinned to it (the pin replaces the client's
   * tier), or seen serving at it unasked, unless the client asked for "default", which OpenAI
   * then serves. (OpenAI serves a prompt over 128k tokens at "default" too: the meter's to tell.)
   */
  askedFor(providerName: string, request: { inferenceGeo?: string; openAIServiceTier?: string }): { geo?: string; tier?: string } {
    const provider = this.providers[providerName];
    const pinned = provider?.type === "openai" && provider.serviceTier === "priority";
    const learned = provider?.type === "openai" && provider.serviceTier === undefined && this.servedAtPriority.has(providerName) && request.openAIServiceTier !== "default";
    const geo = provider?.type === "anthropic" ? request.inferenceGeo : undefined;
    return { ...(geo ? { geo } : {}), ...(pinned || learned ? { tier: "priority" } : {}) };
  }

  /** A call of this provider's was served at `tier`, as its answer said. */
  heardTier(providerName: string, tier: string | undefined): void {
    if (tier !== "priority" || this.servedAtPriority.has(providerName)) return;
    const provider = this.providers[providerName];
    if (provider?.type !== "openai" || provider.serviceTier !== undefined) return;
    this.servedAtPriority.add(providerName);
    this.log(
      `[tollgate] warning: provider "${providerName}" answered at OpenAI's "priority" tier without being asked (its project's default tier): budgets now reserve its calls at priority prices; ` +
        `write "serviceTier": "priority" in its config to do so from start-up, or "default" to keep its calls at the standard tier`,
    );
  }
}

export function unpricedWarning(providerName: string, model: string): string {
  return `no price for model "${model}" on provider "${providerName}": its records are flagged unpriced; add providers.${providerName}.pricing.models["${model}"] to the config`;
}
