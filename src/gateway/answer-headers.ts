import type { Context } from "hono";
import { summarizeRecord, summaryHeaders } from "../dialects/stream-summary.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { formatUsd } from "../pricing/format-usd.ts";
import type { GatewayEnv } from "./gateway-context.ts";

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
