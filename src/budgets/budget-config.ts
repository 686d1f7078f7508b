import { z } from "zod";

// The contract's shapes: `budget` on a route, a key, or a team under `teams`; `rateLimit` on a
// route or a key; `maxCostPerRequestUsd` on a route.

export const budgetSchema = z.strictObject({
  usd: z.number().positive({ error: "the budget in USD, such as 50" }),
  window: z.enum(["day", "week", "month", "total"], { error: 'write "day", "week", "month" or "total"' }),
  /** `hard` rejects with 402 once spent; `soft` serves, flags the record and warns. */
  mode: z.enum(["hard", "soft"], { error: 'write "hard" or "soft"' }).default("hard"),
  /** Where the calendar window turns (IANA name, e.g. "Europe/Berlin"). */
  timeZone: z
    .string()
    .refine((zone) => isTimeZone(zone), { error: 'an IANA time zone such as "UTC" or "America/New_York"' })
    .default("UTC"),
});

export const rateLimitSchema = z
  .strictObject({
    /** Requests per minute (sliding window). */
    rpm: z.number().int().positive().optional(),
    /** Tokens per minute, input and output (sliding window). */
    tpm: z.number().int().positive().optional(),
  })
  .refine((limit) => limit.rpm !== undefined || limit.tpm !== undefined, { error: "give rpm, tpm, or both" });

export const teamSchema = z.strictObject({ budget: budgetSchema.optional() });

export type BudgetConfig = z.output<typeof budgetSchema>;
export type RateLimitConfig = z.output<typeof rateLimitSchema>;

/** The parts of a config that can carry budgets and rate limits. */
type LimitHolders = {
  routes: Record<string, { budget?: BudgetConfig; rateLimit?: RateLimitConfig }>;
  keys: { budget?: BudgetConfig; rateLimit?: RateLimitConfig }[];
  teams?: Record<string, { budget?: BudgetConfig }>;
};

/** Some route, key or team has a budget. */
export function hasBudgets(config: LimitHolders): boolean {
  return (
    Object.values(config.routes).some((route) => route.budget) ||
    config.keys.some((key) => key.budget) ||
    Object.values(config.teams ?? {}).some((team) => team.budget)
  );
}

/** Some route or key has a rate limit. */
export function hasRateLimits(config: LimitHolders): boolean {
  return Object.values(config.routes).some((route) => route.rateLimit) || config.keys.some((key) => key.rateLimit);
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
