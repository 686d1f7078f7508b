/** Nano-dollars as an exact decimal USD string: 12_500 → "0.0000125", 2_000_000_000 → "2". */
export function formatUsd(nanoDollars: number): string {
  const sign = nanoDollars < 0 ? "-" : "";
  const nano = Math.abs(nanoDollars);
  // Integer arithmetic only (exact below 2^53 nano-dollars, $9M): `%` of integers is exact, and so
  // is dividing a multiple of 1e9 by 1e9. No regular expressions: this runs for every answer.
  const fraction = nano % 1e9;
  const whole = (nano - fraction) / 1e9;
  if (fraction === 0) return `${sign}${whole}`;
  const digits = String(fraction).padStart(9, "0");
  let end = 9;
  while (digits.charCodeAt(end - 1) === 48 /* "0" */) end--;
  return `${sign}${whole}.${digits.slice(0, end)}`;
}

/** USD as a number, for readers that want one (reports, metrics); never summed back into money. */
export function nanoToUsd(nanoDollars: number): number {
  return Number(formatUsd(nanoDollars));
}

/** USD as written in config (50, 0.05) to nano-dollars, rounded once. */
export function usdToNano(usd: number): number {
  return Math.round(usd * 1e9);
}

/** Nano-dollars as an exact decimal USD string, for sums that may pass 2^53 (reports). */
export function formatUsdExact(nanoDollars: bigint): string {
  const sign = nanoDollars < 0n ? "-" : "";
  const nano = nanoDollars < 0n ? -nanoDollars : nanoDollars;
  const whole = nano / 1_000_000_000n;
  const fraction = nano % 1_000_000_000n;
  if (fraction === 0n) return `${sign}${whole}`;
  return `${sign}${whole}.${fraction.toString().padStart(9, "0").replace(/0+$/, "")}`;
}
