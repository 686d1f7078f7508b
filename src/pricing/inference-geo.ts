import { scaled, type Rates } from "./rates.ts";
import type { FoundPrice } from "./find-model-price.ts";

// Anthropic bills inference it keeps in the US (`inference_geo: "us"`, on the request or as the
// workspace's default) at 1.1× every token price: input, output, cache reads and writes
// (platform.claude.com/docs/en/about-claude/pricing, data residency). Its answer's usage says where
// inference ran, so the price follows what Anthropic reports; what was asked only where no answer
// says (a call cut before it, request-meter.ts).

/** Where inference ran, by what Anthropic bills for it: numerator / denominator of the base price. */
const GEO_MULTIPLIERS: Readonly<Record<string, readonly [number, number]>> = { us: [11, 10] };

/** The geographies tollgate can price; a request naming another is refused. */
export const PRICED_INFERENCE_GEOS = ["global", "us"] as const;

/** The same, as messages name them: `"global" and "us"`. */
export const PRICED_INFERENCE_GEOS_TEXT = PRICED_INFERENCE_GEOS.map((geo) => `"${geo}"`).join(" and ");

export function isPricedGeo(geo: string): boolean {
  return (PRICED_INFERENCE_GEOS as readonly string[]).includes(geo);
}

/** The price of a call whose inference ran in `geo` (unchanged where that costs nothing more). */
export function priceInGeo(price: FoundPrice, geo: string | undefined): FoundPrice {
  const multiplier = geo === undefined ? undefined : GEO_MULTIPLIERS[geo];
  if (geo === undefined || !multiplier) return price;
  // Admission asks this of every Claude target of every request (most reserve at "us"): the
  // price book's prices are kept, so each one's scaled price is worked out once.
  const known = scaledPrices.get(price)?.get(geo);
  if (known) return known;
  const inGeo = scaledPrice(price, geo, multiplier);
  const byGeo = scaledPrices.get(price) ?? new Map<string, FoundPrice>();
  byGeo.set(geo, inGeo);
  scaledPrices.set(price, byGeo);
  return inGeo;
}

const scaledPrices = new WeakMap<FoundPrice, Map<string, FoundPrice>>();

function scaledPrice(price: FoundPrice, geo: string, multiplier: readonly [number, number]): FoundPrice {
  const scale = (rates: Rates): Rates => ({
    input: scaled(rates.input, multiplier),
    cacheRead: scaled(rates.cacheRead, multiplier),
    cacheWrite5m: scaled(rates.cacheWrite5m, multiplier),
    cacheWrite1h: scaled(rates.cacheWrite1h, multiplier),
    output: scaled(rates.output, multiplier),
  });
  return {
    ...price,
    rates: scale(price.rates),
    ...(price.longContext ? { longContext: { ...price.longContext, rates: scale(price.longContext.rates) } } : {}),
    source: `${price.source}, ×${multiplier[0] / multiplier[1]} for inference in "${geo}"`,
  };
}
