import type { Context } from "hono";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { buildCostReport, renderCostReport } from "../reports/cost-report.ts";
import { parseCostReportQuery } from "../reports/cost-report-query.ts";
import { renderCostCsv } from "../reports/render-cost-csv.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { jsonResponse, requestIdHeaders } from "./json-response.ts";

// GET /v1/admin/costs: the cost report finance reads, as JSON or CSV, for the admin key only
// (every team's and key's spend is in it).

/** `hasAdmin`: the config names an admin key (else no caller can read reports until one is made). */
export async function answerCostReport(c: Context<GatewayEnv>, ledger: Ledger, now: number, hasAdmin = true): Promise<Response> {
  if (c.get("caller").kind !== "admin") {
    const how = hasAdmin ? "call /v1/admin/costs with the admin key" : 'this gateway has no admin key yet: `npx tollgate keys create --admin` makes one, and its hash goes in the config\'s "admin"';
    throw new GatewayError("permission", `cost reports show every team's spend: ${how}`);
  }
  const totalsOf = ledger.totals;
  if (!totalsOf) {
    throw new GatewayError("not_implemented", "this gateway's ledger keeps no aggregates to report from (the Workers entry writes records to its log): read the records from Workers Logs, or run reports on a Node gateway sharing the ledger's Redis", {
      code: "reports_unavailable",
    });
  }
  const query = parseCostReportQuery(c.req.queries(), new Date(now).toISOString().slice(0, 10));
  const report = await buildCostReport(query, (day) =>
    totalsOf(day).catch((error: unknown) => {
      // The store's outage is not a tollgate bug (500): say what it is and when to come back.
      throw new GatewayError("unavailable", "the ledger store is unreachable; cost reports cannot be read until it is back", { code: "ledger_store_unavailable", retryAfterSeconds: 1, cause: error });
    }),
  );
  const requestId = c.get("requestId");
  // Every team's spend: no shared cache may keep a copy.
  const privately = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
  if (query.format === "json") return jsonResponse(renderCostReport(report), 200, requestId, privately);
  return new Response(renderCostCsv(report), {
    status: 200,
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="tollgate-costs-${query.from}-to-${query.to}.csv"`,
      ...requestIdHeaders(requestId),
      ...privately,
    },
  });
}
