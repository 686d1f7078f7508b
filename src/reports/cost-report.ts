import type { AggregateEntry, AggregateMetric } from "../ledger/ledger-store.ts";
import { formatUsdExact } from "../pricing/format-usd.ts";
import { nextTurn } from "../runtime/next-turn.ts";
import { daysOf, type CostReportQuery, type FilterDimension, type ReportDimension } from "./cost-report-query.ts";

// A cost report: the ledger's daily aggregates over a range of UTC days, filtered, summed by the
// dimensions asked for. Only the aggregates are read (one read per day), never the records, so a
// month's report costs the same at 10 requests a day as at 10 million.

/** What every row (and the totals) carries. Money is integer nano-dollars, summed as BigInt. */
export type ReportMetrics = {
  requests: number;
  errors: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costNano: bigint;
  cacheSavingsNano: bigint;
  /** Records whose tokens tollgate counted itself, and records with no price (cost 0). */
  estimated: number;
  unpriced: number;
};

export type ReportRow = { dimensions: Partial<Record<ReportDimension, string>>; metrics: ReportMetrics };

/**
 * `unmatched`: filter values no record in the range carries. A team with no spend this month
 * is a true $0, so it is no error; but a typo (`team=serach`) or two names in one value
 * (`team=a,b`) looks the same, and a finance script should be told.
 */
export type CostReport = { query: CostReportQuery; rows: ReportRow[]; totals: ReportMetrics; unmatched: Partial<Record<FilterDimension, string[]>> };

/** The ledger's name of each metric, and where it goes in a row. */
export const METRIC_FIELDS: Record<AggregateMetric, keyof ReportMetrics> = {
  requests: "requests",
  errors: "errors",
  input_tokens: "inputTokens",
  cache_read_tokens: "cacheReadTokens",
  cache_write_5m_tokens: "cacheWrite5mTokens",
  cache_write_1h_tokens: "cacheWrite1hTokens",
  output_tokens: "outputTokens",
  reasoning_tokens: "reasoningTokens",
  cost_nano: "costNano",
  cache_savings_nano: "cacheSavingsNano",
  estimated: "estimated",
  unpriced: "unpriced",
};

/** A report's dimension, as the aggregates name it. */
const DIMENSION_FIELDS = { team: "team", key: "keyId", route: "route", provider: "provider", model: "model" } as const satisfies Record<FilterDimension, string>;

/** Days read from the store at once; the report yields to other requests after each group. */
const DAYS_PER_READ = 4;

/**
 * Builds the report from the aggregates of each day of the query (`totalsOf(day)`). A year of a
 * large platform is a million aggregates: the days are read a few at a time (on Redis each read
 * is one HGETALL, held to the client's command timeout, so a year's report must not be one
 * burst), and the event loop is let go between them, so the answers being proxied meanwhile
 * never wait behind a report for more than a few days' worth of sums.
 */
export async function buildCostReport(query: CostReportQuery, totalsOf: (day: string) => Promise<AggregateEntry[]>): Promise<CostReport> {
  const days = daysOf(query);
  const groups = new Map<string, ReportRow>();
  const totals = emptyMetrics();
  const filtered = Object.keys(query.filters) as FilterDimension[];
  const seen = new Map<FilterDimension, Set<string>>(filtered.map((dimension) => [dimension, new Set()]));
  for (let at = 0; at < days.length; at += DAYS_PER_READ) {
    const some = days.slice(at, at + DAYS_PER_READ);
    const perDay = await Promise.all(some.map((day) => totalsOf(day)));
    some.forEach((day, index) => {
      for (const entry of perDay[index]!) {
        for (const dimension of filtered) seen.get(dimension)!.add(entry.dimensions[DIMENSION_FIELDS[dimension]]);
        if (!passes(entry, query.filters)) continue;
        const dimensions: ReportRow["dimensions"] = {};
        for (const dimension of query.groupBy) dimensions[dimension] = dimension === "day" ? day : entry.dimensions[DIMENSION_FIELDS[dimension]];
        const groupKey = JSON.stringify(query.groupBy.map((dimension) => dimensions[dimension]));
        let row = groups.get(groupKey);
        if (!row) groups.set(groupKey, (row = { dimensions, metrics: emptyMetrics() }));
        add(row.metrics, entry);
        add(totals, entry);
      }
    });
    if (at + DAYS_PER_READ < days.length) await new Promise<void>((resolve) => nextTurn(resolve));
  }
  const rows = [...groups.values()].sort((a, b) => compareRows(a, b, query.groupBy));
  const unmatched: CostReport["unmatched"] = {};
  for (const dimension of filtered) {
    const missing = query.filters[dimension]!.filter((value) => !seen.get(dimension)!.has(value));
    if (missing.length > 0) unmatched[dimension] = missing;
  }
  return { query, rows, totals, unmatched };
}

/** A line per filter value that matched no record in the range: the JSON answer's "warnings", the CSV's x-tollgate-warnings. */
export function unmatchedWarnings(report: CostReport): string[] {
  return Object.entries(report.unmatched).flatMap(([dimension, values]) =>
    values.map((value) => {
      const several = value.includes(",") ? `; for several, repeat the parameter: ${value.split(",").map((name) => `${dimension}=${name.trim()}`).join("&")}` : "";
      return `${dimension} "${value}" matches no record from ${report.query.from} to ${report.query.to} (names match whole and exactly${several})`;
    }),
  );
}

/** A row or the totals as the JSON answer writes them: money as exact strings, USD and nano. */
export function renderMetrics(metrics: ReportMetrics) {
  const { costNano, cacheSavingsNano, ...counts } = metrics;
  return {
    ...counts,
    // Strings: a year of a platform's spend can pass 2^53 nano-dollars ($9M), past what a JSON
    // number keeps exactly in JavaScript.
    costNano: costNano.toString(),
    costUsd: formatUsdExact(costNano),
    cacheSavingsNano: cacheSavingsNano.toString(),
    cacheSavingsUsd: formatUsdExact(cacheSavingsNano),
  };
}

function renderRow(row: ReportRow) {
  return { ...row.dimensions, ...renderMetrics(row.metrics) };
}

/** Rows rendered at once by the piecewise renderers: some 10–20 ms of work on the 2-core machine. */
export const ROWS_PER_PIECE = 500;

/**
 * The JSON answer (`from`, `to`, `groupBy`, `rows`, `totals`, and `warnings` where a filter
 * matched nothing), in pieces of ROWS_PER_PIECE rows. A year's report of a large
 * platform is some 70,000 rows, seconds of rendering: the gateway writes it a piece per turn of
 * the event loop, so the answers it proxies meanwhile never wait behind it.
 */
export function* costReportJsonPieces(report: CostReport, rowsPerPiece = ROWS_PER_PIECE): Generator<string> {
  const { query } = report;
  yield `{"from":${JSON.stringify(query.from)},"to":${JSON.stringify(query.to)},"groupBy":${JSON.stringify(query.groupBy)},"rows":[`;
  for (let at = 0; at < report.rows.length; at += rowsPerPiece) {
    const rows = report.rows.slice(at, at + rowsPerPiece).map((row) => JSON.stringify(renderRow(row)));
    yield (at > 0 ? "," : "") + rows.join(",");
  }
  const warnings = unmatchedWarnings(report);
  yield `],"totals":${JSON.stringify(renderMetrics(report.totals))}${warnings.length > 0 ? `,"warnings":${JSON.stringify(warnings)}` : ""}}`;
}

function passes(entry: AggregateEntry, filters: CostReportQuery["filters"]): boolean {
  for (const dimension of Object.keys(filters) as FilterDimension[]) {
    if (!filters[dimension]!.includes(entry.dimensions[DIMENSION_FIELDS[dimension]])) return false;
  }
  return true;
}

function add(metrics: ReportMetrics, entry: AggregateEntry): void {
  const field = METRIC_FIELDS[entry.metric];
  // A store written by a newer tollgate may hold metrics this one does not know: skip them.
  if (field === undefined) return;
  if (field === "costNano" || field === "cacheSavingsNano") metrics[field] += BigInt(entry.value);
  else metrics[field] += Number(entry.value);
}

function emptyMetrics(): ReportMetrics {
  return {
    requests: 0,
    errors: 0,
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    costNano: 0n,
    cacheSavingsNano: 0n,
    estimated: 0,
    unpriced: 0,
  };
}

/** By each grouped dimension in turn, by code unit (days sort by date): the same order on every store. */
function compareRows(a: ReportRow, b: ReportRow, groupBy: readonly ReportDimension[]): number {
  for (const dimension of groupBy) {
    const left = a.dimensions[dimension]!;
    const right = b.dimensions[dimension]!;
    if (left !== right) return left < right ? -1 : 1;
  }
  return 0;
}
