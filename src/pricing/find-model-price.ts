import type { BundledPrice, ModelLimits, ModelRetirement } from "./bundled-prices.ts";
import { BUNDLED_PRICES, REASONING } from "./bundled-prices.ts";
import { ratesFromGpuHour, ratesFromUsdPerMillion, scaled, type ModelPrice, type Rates } from "./rates.ts";

// Which price applies to a call: the provider's own overrides from config first (per model, then
// the provider's default), then the bundled list for OpenAI and Anthropic. A model found nowhere
// is "unpriced": the caller records that loudly instead of writing a silent $0.

/** A price as config writes it (validated there: either the per-1M fields or the GPU-hour ones). */
export type ConfiguredPrice = {
  inputPerMillion?: number;
  outputPerMillion?: number;
  cachedInputPerMillion?: number;
  cacheWrite5mPerMillion?: number;
  cacheWrite1hPerMillion?: number;
  gpuHourUsd?: number;
  inputTokensPerSecond?: number;
  outputTokensPerSecond?: number;
  longContext?: { aboveInputTokens: number } & PerMillionFields;
};

type PerMillionFields = {
  inputPerMillion?: number;
  outputPerMillion?: number;
  cachedInputPerMillion?: number;
  cacheWrite5mPerMillion?: number;
  cacheWrite1hPerMillion?: number;
};

function perMillionRates(price: PerMillionFields, providerType?: PricedProvider["type"]): Rates {
  const rates = ratesFromUsdPerMillion({
    input: price.inputPerMillion ?? 0,
    output: price.outputPerMillion ?? 0,
    ...(price.cachedInputPerMillion !== undefined ? { cachedInput: price.cachedInputPerMillion } : {}),
    ...(price.cacheWrite5mPerMillion !== undefined ? { cacheWrite5m: price.cacheWrite5mPerMillion } : {}),
    ...(price.cacheWrite1hPerMillion !== undefined ? { cacheWrite1h: price.cacheWrite1hPerMillion } : {}),
  });
  if (providerType !== "anthropic") return rates;
  // Anthropic's cache prices are fixed multiples of input (reads 0.1×, 5-minute writes 1.25×,
  // 1-hour writes 2×): an override that gives only input and output means those, not 1×.
  return {
    ...rates,
    ...(price.cachedInputPerMillion === undefined ? { cacheRead: scaled(rates.input, [1, 10]) } : {}),
    ...(price.cacheWrite5mPerMillion === undefined ? { cacheWrite5m: scaled(rates.input, [5, 4]) } : {}),
    ...(price.cacheWrite1hPerMillion === undefined ? { cacheWrite1h: scaled(rates.input, [2, 1]) } : {}),
  };
}

export type ProviderPricing = { default?: ConfiguredPrice; models?: Record<string, ConfiguredPrice> };

export type PricedProvider = { type: "openai" | "anthropic" | "openai-compatible"; pricing?: ProviderPricing };

export type FoundPrice = ModelPrice & {
  source: string;
  /** OpenAI: the price of a call served at its "priority" tier, where the bundled list has it. */
  priority?: ModelPrice & { source: string };
};

export function toModelPrice(price: ConfiguredPrice, providerType?: PricedProvider["type"]): ModelPrice {
  if (price.gpuHourUsd !== undefined) {
    return {
      rates: ratesFromGpuHour({
        gpuHourUsd: price.gpuHourUsd,
        inputTokensPerSecond: price.inputTokensPerSecond ?? 0,
        outputTokensPerSecond: price.outputTokensPerSecond ?? 0,
      }),
    };
  }
  const long = price.longContext;
  return {
    rates: perMillionRates(price, providerType),
    ...(long ? { longContext: { aboveInputTokens: long.aboveInputTokens, rates: perMillionRates(long, providerType) } } : {}),
  };
}

/** `gpt-4o-2024-08-06` and `claude-sonnet-4-5-20250929` are priced as `gpt-4o` and `claude-sonnet-4-5`. */
const DATED_SNAPSHOT = /-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

type PriceTable<T> = Record<string, T> | ReadonlyMap<string, T> | undefined;

/** The entry under exactly this name. */
function lookupExact<T>(table: PriceTable<T>, name: string): T | undefined {
  if (!table) return undefined;
  // Own keys only: a model called "constructor" must not find Object.prototype's (a $0 price).
  return table instanceof Map ? table.get(name) : Object.hasOwn(table, name) ? (table as Record<string, T>)[name] : undefined;
}

/** The entry under this name, else under its name without a snapshot date. */
function lookup<T>(table: PriceTable<T>, model: string): T | undefined {
  return lookupExact(table, model) ?? (DATED_SNAPSHOT.test(model) ? lookupExact(table, model.replace(DATED_SNAPSHOT, "")) : undefined);
}

const bundledByProvider = new Map<string, Map<string, BundledPrice>>();
for (const entry of BUNDLED_PRICES) {
  const models = bundledByProvider.get(entry.provider) ?? new Map<string, BundledPrice>();
  models.set(entry.model, entry);
  for (const alias of entry.aliases ?? []) models.set(alias, entry);
  bundledByProvider.set(entry.provider, models);
}

function fromBundled(entry: BundledPrice): FoundPrice {
  return {
    rates: ratesFromUsdPerMillion(entry.price),
    ...(entry.longContext
      ? { longContext: { aboveInputTokens: entry.longContext.aboveInputTokens, rates: ratesFromUsdPerMillion(entry.longContext.price) } }
      : {}),
    source: `${entry.source} (${entry.asOf})`,
    ...(entry.priority
      ? { priority: { rates: ratesFromUsdPerMillion(entry.priority.price), source: `${entry.priority.source} (${entry.priority.asOf})` } }
      : {}),
  };
}

/**
 * @param model the model the route asked for
 * @param responseModel the model the provider says answered, when known (a dated snapshot)
 */
export function findModelPrice(provider: PricedProvider, model: string, responseModel?: string): FoundPrice | undefined {
  // The most specific name first: the snapshot that answered, then the model asked for.
  const names = responseModel && responseModel !== model ? [responseModel, model] : [model];
  const configured = provider.pricing?.models;
  const bundled = provider.type === "openai-compatible" ? undefined : bundledByProvider.get(provider.type);
  // A price under the exact name, then one under the name without its date; but not the base
  // model's price for a snapshot the list prices on its own (gpt-4o-2024-05-13 is not gpt-4o).
  const inConfig =
    names.map((name) => lookupExact(configured, name)).find(Boolean) ??
    names.filter((name) => !lookupExact(bundled, name)).map((name) => lookup(configured, name)).find(Boolean);
  if (inConfig) return { ...toModelPrice(inConfig, provider.type), source: "config" };
  if (provider.pricing?.default) return { ...toModelPrice(provider.pricing.default, provider.type), source: "config" };
  const entry = names.map((name) => lookup(bundled, name)).find(Boolean);
  return entry ? fromBundled(entry) : undefined;
}

/** What the bundled list knows of a model's limits; empty for local decoders and unknown models. */
export function findModelLimits(providerType: PricedProvider["type"], named: string): ModelLimits {
  if (providerType === "openai-compatible") return {};
  // A fine-tuned model (`ft:gpt-4o-2024-08-06:org::id`) takes what its base model takes. (Not
  // its price: OpenAI bills fine-tuned models at rates of their own, priced in config.)
  const model = FINE_TUNED.exec(named)?.[1] ?? named;
  const listed = lookup(bundledByProvider.get(providerType), model)?.limits;
  if (listed) return listed;
  // OpenAI's reasoning models are named o1, o3-mini, o3-pro, o4-mini…: one the list does not
  // price still refuses what every o-series model refuses (temperature, top_p, stop).
  if (providerType !== "openai") return {};
  if (O_SERIES.test(model)) return UNLISTED_O_SERIES;
  // gpt-5, -mini and -nano reason too, and refuse the same ("Unsupported parameter: 'stop' is not
  // supported with this model", as reported against the API: huggingface/smolagents#1662,
  // BerriAI/litellm#15244), but take `verbosity`, which came with them. gpt-5.1 and later reason
  // at "none" by default, where they take temperature, top_p and logprobs (vercel/ai#10940), yet
  // still refuse stop (smolagents#1868, #1893). The chat variants (gpt-5-chat-latest) do not reason.
  if (model.includes("-chat")) return {};
  if (GPT_5.test(model)) return UNLISTED_GPT_5;
  if (GPT_5_POINT.test(model)) return NO_STOP;
  return {};
}

const O_SERIES = /^o\d+(-|$)/;
const GPT_5 = /^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$/;
const GPT_5_POINT = /^gpt-5\.\d+(-|$)/;
const NO_STOP: ModelLimits = { maxStopSequences: 0 };
const FINE_TUNED = /^ft:([^:]+):/;
// Their output limits differ (o1-mini 65,536, o3 100,000): the provider's own check stands.
const { maxOutputTokens: _differs, ...UNLISTED_O_SERIES } = REASONING;
const { noVerbosity: _takesVerbosity, noParallelToolCalls: _takesParallelCalls, ...UNLISTED_GPT_5 } = UNLISTED_O_SERIES;

/** When the provider retires a model, where the bundled list knows it (dated snapshots included). */
export function findModelRetirement(providerType: PricedProvider["type"], model: string): ModelRetirement | undefined {
  if (providerType === "openai-compatible") return undefined;
  return lookup(bundledByProvider.get(providerType), model)?.retirement;
}

/**
 * Config prices that would bill long prompts below what the provider invoices: an override of a
 * bundled model that has a long-context tier, written without one of its own, under
 * `pricing.models`, or as the provider's `pricing.default` for a model a route sends it.
 */
export function missingLongContextWarnings(providerName: string, provider: PricedProvider, routedModels: readonly string[]): string[] {
  if (provider.type === "openai-compatible") return [];
  const bundled = bundledByProvider.get(provider.type);
  const overrides = provider.pricing?.models ?? {};
  const priced: [string, string, ConfiguredPrice][] = Object.entries(overrides).map(([model, price]) => [model, `models["${model}"]`, price]);
  const fallback = provider.pricing?.default;
  if (fallback) {
    for (const model of new Set(routedModels)) if (!lookup(overrides, model)) priced.push([model, "default", fallback]);
  }
  return priced.flatMap(([model, where, price]) => {
    const tier = lookup(bundled, model)?.longContext;
    if (!tier || price.longContext) return [];
    return [
      `providers.${providerName}.pricing.${where} has no longContext, so ${model}'s requests above ${tier.aboveInputTokens} input tokens are billed at its base price; ` +
        `${provider.type} charges more there (the bundled list: $${tier.price.input} / $${tier.price.output} per 1M): add "longContext": {"aboveInputTokens": ${tier.aboveInputTokens}, "inputPerMillion": …, "outputPerMillion": …}`,
    ];
  });
}

/**
 * Config prices for models no route sends to the provider: a misspelt name (`gpt4o`) leaves the
 * model it meant at the bundled price, or unpriced, with nothing said. A price for a dated
 * snapshot of a routed model (or the other way round) is used, when the provider answers with it.
 */
export function unroutedPriceWarnings(providerName: string, provider: PricedProvider, routedModels: readonly string[]): string[] {
  // A model as the bundled list knows it (an alias, `claude-sonnet-4-0`, is its model's), else
  // its name without a snapshot date: a price for either form is used for the other.
  const bundled = provider.type === "openai-compatible" ? undefined : bundledByProvider.get(provider.type);
  const base = (model: string) => lookup(bundled, model)?.model ?? model.replace(DATED_SNAPSHOT, "");
  const routed = [...new Set(routedModels)];
  return Object.keys(provider.pricing?.models ?? {})
    .filter((priced) => !routed.some((model) => base(model) === base(priced)))
    .map(
      (priced) =>
        `providers.${providerName}.pricing.models["${priced}"] prices a model no route sends to ${providerName}` +
        `${routed.length > 0 ? ` (its routes send ${routed.map((model) => `"${model}"`).join(", ")})` : ""}: check the name, or remove the entry`,
    );
}
