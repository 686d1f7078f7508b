// Prices inside tollgate are integer pico-dollars (1e-12 USD) per token, so that a table price in
// USD per 1M tokens with up to six decimals becomes an integer ($2.50 / 1M = 2,500,000 pico per
// token) and every cost is an exact integer product (a price with more decimals, a fraction of
// them). Costs are then rounded once to nano-dollars.
// A GPU-hour price is no whole number of pico-dollars per token ($2 / (5000 × 3600) tokens), so
// it stays a fraction, and it too is rounded only once, per cost line.

/** Pico-dollars per token, or `pico` per `perTokens` tokens. */
export type Rate = number | { pico: number; perTokens: number };

export type Rates = {
  input: Rate;
  cacheRead: Rate;
  cacheWrite5m: Rate;
  cacheWrite1h: Rate;
  output: Rate;
};

/** A model's price: base rates, and rates that replace them above an input size (long context). */
export type ModelPrice = {
  rates: Rates;
  /** Rates used when the request's total input (cache included) exceeds `aboveInputTokens`. */
  longContext?: { aboveInputTokens: number; rates: Rates };
};

export type UsdPerMillion = {
  input: number;
  output: number;
  /** Defaults to the input price: no discount is assumed where none is known. */
  cachedInput?: number;
  cacheWrite5m?: number;
  cacheWrite1h?: number;
};

const PICO_PER_USD_PER_MILLION = 1_000_000;

/** The finest price fraction kept: a billionth of a pico-dollar per token. */
const MAX_PER_TOKENS = 1_000_000_000;

/**
 * A price in USD per 1M tokens as written (its shortest decimal form, so 0.075 is 0.075 and not
 * 0.07500000000000001), as pico-dollars per token: a whole number up to six decimals, else a
 * fraction (`$1.2345678` → 12,345,678 pico per 10 tokens), so that it is never rounded before
 * it is multiplied, and a tiny non-zero price never becomes a silent $0.
 */
export function picoPerToken(usdPerMillion: number): Rate {
  const [mantissa, exponent = "0"] = String(usdPerMillion).split("e");
  const [whole, fraction = ""] = mantissa!.split(".");
  // digits × 10^-(decimals) USD per 1M tokens = digits × 10^(6 - decimals) pico per token.
  const decimals = fraction.length - Number(exponent);
  const digits = Number(`${whole}${fraction}`);
  if (decimals <= 6) return digits * 10 ** (6 - decimals);
  if (decimals - 6 <= Math.log10(MAX_PER_TOKENS)) return { pico: digits, perTokens: 10 ** (decimals - 6) };
  return { pico: Math.round(usdPerMillion * PICO_PER_USD_PER_MILLION * MAX_PER_TOKENS), perTokens: MAX_PER_TOKENS };
}

export function ratesFromUsdPerMillion(price: UsdPerMillion): Rates {
  return {
    input: picoPerToken(price.input),
    cacheRead: picoPerToken(price.cachedInput ?? price.input),
    cacheWrite5m: picoPerToken(price.cacheWrite5m ?? price.input),
    cacheWrite1h: picoPerToken(price.cacheWrite1h ?? price.input),
    output: picoPerToken(price.output),
  };
}

export type GpuHourPrice = {
  /** What one hour of the decoder's GPU costs. */
  gpuHourUsd: number;
  /** Measured prompt-processing (prefill) speed at full load. */
  inputTokensPerSecond: number;
  /** Measured generation (decode) speed at full load, summed over concurrent requests. */
  outputTokensPerSecond: number;
};

/**
 * A local decoder's price from what its GPU costs per hour and how many tokens it moves per hour.
 * Input and output are weighted by their own measured speeds: prefill runs many tokens per forward
 * pass, decode one, so an output token costs far more GPU time. Prefix-cache hits skip prefill
 * and cost nothing extra; a local decoder has no cache-write premium.
 */
export function ratesFromGpuHour(price: GpuHourPrice): Rates {
  const pico = Math.round(price.gpuHourUsd * 1e12);
  // Tokens per hour, to the whole token: finer than any measured speed is.
  const input = { pico, perTokens: Math.round(price.inputTokensPerSecond * 3600) };
  return {
    input,
    cacheRead: 0,
    cacheWrite5m: input,
    cacheWrite1h: input,
    output: { pico, perTokens: Math.round(price.outputTokensPerSecond * 3600) },
  };
}

/** A rate times numerator / denominator, kept exact: a whole number of pico-dollars where it divides. */
export function scaled(rate: Rate, [numerator, denominator]: readonly [number, number]): Rate {
  if (typeof rate === "number") {
    const product = rate * numerator;
    return product % denominator === 0 ? product / denominator : { pico: product, perTokens: denominator };
  }
  return { pico: rate.pico * numerator, perTokens: rate.perTokens * denominator };
}
