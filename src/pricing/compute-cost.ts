import type { CostBreakdown } from "../metering/cost-record.ts";
import { totalInputTokens, type Usage } from "../model/usage.ts";
import type { ModelPrice, Rate, Rates } from "./rates.ts";

// tokens × pico-dollars per token is exact in BigInt; each line is then rounded once, half up,
// to nano-dollars. With the bundled prices (whole milli-dollars per 1M tokens) nothing is ever
// rounded: every line is already a whole number of nano-dollars.

const PICO_PER_NANO = 1000n;

/**
 * tokens × rate, plus moreTokens × moreRate where a line has two terms (the cache writes: 5-minute
 * and 1-hour), summed exactly and rounded half up to nano-dollars once.
 */
function nano(tokens: number | undefined, rate: Rate, moreTokens?: number, moreRate: Rate = 0): number {
  // The sum as numerator / denominator pico-dollars.
  let numerator = 0n;
  let denominator = 1n;
  const add = (count: number | undefined, term: Rate) => {
    // A provider's count is trusted to be a whole, non-negative number only after this.
    const whole = Math.max(0, Math.trunc(count ?? 0));
    if (!Number.isFinite(whole) || whole === 0) return;
    const [pico, perTokens] = typeof term === "number" ? [term, 1] : [term.pico, term.perTokens];
    if (perTokens <= 0) return; // a speed of 0 in config: no price can be derived
    const per = BigInt(perTokens);
    numerator = numerator * per + BigInt(whole) * BigInt(pico) * denominator;
    denominator *= per;
  };
  add(tokens, rate);
  add(moreTokens, moreRate);
  if (numerator === 0n) return 0;
  const divisor = PICO_PER_NANO * denominator;
  return Number((numerator * 2n + divisor) / (2n * divisor));
}

export function ratesFor(price: ModelPrice, usage: Usage): Rates {
  const long = price.longContext;
  return long && totalInputTokens(usage) > long.aboveInputTokens ? long.rates : price.rates;
}

export function computeCost(usage: Usage, price: ModelPrice): CostBreakdown {
  const rates = ratesFor(price, usage);
  const inputNano = nano(usage.inputTokens, rates.input);
  const cacheReadNano = nano(usage.cacheReadTokens, rates.cacheRead);
  const cacheWriteNano = nano(usage.cacheWrite5mTokens, rates.cacheWrite5m, usage.cacheWrite1hTokens, rates.cacheWrite1h);
  const outputNano = nano(usage.outputTokens, rates.output);
  return {
    inputNano,
    cacheReadNano,
    cacheWriteNano,
    outputNano,
    totalNano: inputNano + cacheReadNano + cacheWriteNano + outputNano,
    cacheSavingsNano: nano(usage.cacheReadTokens, rates.input) - cacheReadNano,
  };
}

export const ZERO_COST: CostBreakdown = {
  inputNano: 0,
  cacheReadNano: 0,
  cacheWriteNano: 0,
  outputNano: 0,
  totalNano: 0,
  cacheSavingsNano: 0,
};
