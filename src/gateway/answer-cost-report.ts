import type { Context } from "hono";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { buildCostReport, costReportJsonPieces, unmatchedWarnings } from "../reports/cost-report.ts";
import { parseCostReportQuery } from "../reports/cost-report-query.ts";
import { costCsvPieces } from "../reports/render-cost-csv.ts";
import { nextTurn } from "../runtime/next-turn.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { requestIdHeaders } from "./json-response.ts";

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
  const csv = query.format === "csv";
  const warnings = csv ? warningsHeader(unmatchedWarnings(report)) : undefined;
  return new Response(onePiecePerTurn(csv ? costCsvPieces(report) : costReportJsonPieces(report)), {
    status: 200,
    headers: {
      "content-type": csv ? "text/csv; charset=utf-8" : "application/json",
      ...(csv ? { "content-disposition": `attachment; filename="tollgate-costs-${query.from}-to-${query.to}.csv"` } : {}),
      ...(warnings ? { "x-tollgate-warnings": warnings } : {}),
      ...requestIdHeaders(requestId),
      ...privately,
    },
  });
}

/** Clients refuse an answer whose headers pass 16 KB (Node's fetch among them): the warnings stay well under. */
const WARNINGS_HEADER_MAX_CHARS = 4000;

/**
 * The JSON answer's "warnings", for the CSV's header `x-tollgate-warnings`. A filter value that
 * matched nothing (a typo) otherwise gives a header row and no data, a 200 that a finance script
 * files as $0; and a line in the file would be read as data by a spreadsheet's import. A JSON
 * array of strings, each character outside printable ASCII written \uXXXX, so that a name in
 * any script fits in a header and JSON.parse gives it back as written. A long list keeps what
 * fits and ends with how many more.
 */
export function warningsHeader(warnings: string[]): string | undefined {
  if (warnings.length === 0) return undefined;
  const kept: string[] = [];
  for (const warning of warnings) {
    if (asciiJson([...kept, warning]).length > WARNINGS_HEADER_MAX_CHARS - 100) {
      const more = warnings.length - kept.length;
      kept.push(`and ${more} more filter ${more === 1 ? "value matches" : "values match"} no record: the JSON report lists them all`);
      break;
    }
    kept.push(warning);
  }
  return asciiJson(kept);
}

function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A body rendered a piece per turn of the event loop. A client reading as fast as it can would
 * otherwise pull every piece within one turn (a read is a promise job), and a year's report held
 * the gateway for seconds: no other answer, no stream's next token, went out meanwhile.
 */
function onePiecePerTurn(pieces: Generator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        await new Promise<void>((resolve) => nextTurn(resolve));
        const next = pieces.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      cancel() {
        pieces.return(undefined);
      },
    },
    new CountQueuingStrategy({ highWaterMark: 1 }),
  );
}
