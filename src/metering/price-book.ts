import type { ResolvedProvider } from "../config/resolve-config.ts";
import { findModelPrice, type FoundPrice } from "../pricing/find-model-price.ts";

// The prices of the configured providers, looked up once per (provider, model, answering model)
// and then kept: a request pays a Map lookup, not a table walk. A model with no price is warned
// about once per process, loudly, and every record of it is flagged `unpriced`.

export class PriceBook {
  private readonly found = new Map<string, FoundPrice | null>();
  /** Provider and model pairs already warned about (admission and the meter look each up). */
  private readonly warned = new Set<string>();

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
}

export function unpricedWarning(providerName: string, model: string): string {
  return `no price for model "${model}" on provider "${providerName}": its records are flagged unpriced; add providers.${providerName}.pricing.models["${model}"] to the config`;
}
