import type { Context } from "hono";
import { summarizeRecord, summaryHeaders } from "../dialects/stream-summary.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { formatUsd } from "../pricing/format-usd.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { requestIdHeaders } from "./json-response.ts";

/**
 * The figures a non-streamed answer carries, from the provider or from the response cache alike:
 * the record's summary, and what its budgets have left after it.
 */
export function answerHeaders(c: Context<GatewayEnv>, record: CostRecord): Record<string, string> {
  const headers = summaryHeaders(summarizeRecord(record));
  const remaining = c.get("ticket")?.remainingNano(record.cost.totalNano);
  if (remaining !== undefined) headers["x-tollgate-budget-remaining-usd"] = formatUsd(remaining);
  return headers;
}

/**
 * A streamed answer's headers, from the provider or from the response cache alike: the figures
 * come in the stream's final event, the headers say where the answer came from and what the
 * policies changed. `cache`: whether it was a response-cache hit or miss, on a caching route.
 */
export function streamHeaders(c: Context<GatewayEnv>, route: string, provider: string, policyNotes: string[], cache?: "hit" | "miss"): Record<string, string> {
  return {
    ...requestIdHeaders(c.get("requestId")),
    "x-tollgate-route": route,
    "x-tollgate-provider": provider,
    ...(policyNotes.length > 0 ? { "x-tollgate-policies": policyNotes.join("; ") } : {}),
    ...(cache ? { "x-tollgate-cache": cache } : {}),
  };
}
