import { stringify } from "csv-stringify/sync";
import { formatUsdExact } from "../pricing/format-usd.ts";
import type { CostReport } from "./cost-report.ts";

// The CSV a finance team opens in a spreadsheet: one row per group, the grouped dimensions first,
// then counts and USD as exact decimals. No totals row: a spreadsheet sums, and a totals row would
// be summed again with the rest.

const METRIC_COLUMNS = [
  "requests",
  "errors",
  "input_tokens",
  "cache_read_tokens",
  "cache_write_5m_tokens",
  "cache_write_1h_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cost_usd",
  "cache_savings_usd",
  "estimated",
  "unpriced",
];

export function renderCostCsv(report: CostReport): string {
  const header = [...report.query.groupBy, ...METRIC_COLUMNS];
  const rows = report.rows.map(({ dimensions, metrics: m }) => [
    ...report.query.groupBy.map((dimension) => dimensions[dimension]!),
    m.requests,
    m.errors,
    m.inputTokens,
    m.cacheReadTokens,
    m.cacheWrite5mTokens,
    m.cacheWrite1hTokens,
    m.outputTokens,
    m.reasoningTokens,
    formatUsdExact(m.costNano),
    formatUsdExact(m.cacheSavingsNano),
    m.estimated,
    m.unpriced,
  ]);
  // A model name comes from the provider's answer: "=HYPERLINK(…)" must stay text in a spreadsheet.
  // CRLF, as RFC 4180 writes records.
  return stringify([header, ...rows], { escape_formulas: true, record_delimiter: "windows" });
}
