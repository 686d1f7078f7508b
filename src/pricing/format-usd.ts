/** Nano-dollars as an exact decimal USD string: 12_500 → "0.0000125", 2_000_000_000 → "2". */
export function formatUsd(nanoDollars: number): string {
  const negative = nanoDollars < 0;
  const digits = String(Math.abs(nanoDollars)).padStart(10, "0");
  const whole = digits.slice(0, -9).replace(/^0+(?=\d)/, "");
  const fraction = digits.slice(-9).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** USD as a number, for readers that want one (reports, metrics); never summed back into money. */
export function nanoToUsd(nanoDollars: number): number {
  return Number(formatUsd(nanoDollars));
}

/** USD as written in config (50, 0.05) to nano-dollars, rounded once. */
export function usdToNano(usd: number): number {
  return Math.round(usd * 1e9);
}
