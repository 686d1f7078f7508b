import { stringify, type Options } from "csv-stringify/sync";
import { AGGREGATE_METRICS } from "../ledger/ledger-store.ts";
import { formatUsdExact } from "../pricing/format-usd.ts";
import { METRIC_FIELDS, ROWS_PER_PIECE, type CostReport, type ReportRow } from "./cost-report.ts";

// The CSV a finance team opens in a spreadsheet: one row per group, the grouped dimensions first,
// then the ledger's metrics under its own names, money as exact USD (`cost_nano` → `cost_usd`).
// No totals row: a spreadsheet sums, and a totals row would be summed again with the rest.

const METRIC_COLUMNS = AGGREGATE_METRICS.map((metric) => metric.replace(/_nano$/, "_usd"));

/** The CSV in pieces of ROWS_PER_PIECE rows (the header with the first), written a piece per event-loop turn. */
export function* costCsvPieces(report: CostReport, rowsPerPiece = ROWS_PER_PIECE): Generator<string> {
  const firstMetric = report.query.groupBy.length;
  const row = ({ dimensions, metrics }: ReportRow) => [
    ...report.query.groupBy.map((dimension) => dimensions[dimension]!),
    ...AGGREGATE_METRICS.map((metric) => {
      const value = metrics[METRIC_FIELDS[metric]];
      return typeof value === "bigint" ? formatUsdExact(value) : value;
    }),
  ];
  // A model name comes from the provider's answer: "=HYPERLINK(…)" must stay text in a spreadsheet.
  // The metrics are numbers tollgate wrote (a negative cache saving, "-0.00125", included), which
  // a spreadsheet must be able to sum: escaping is for the dimensions only.
  // CRLF, as RFC 4180 writes records. A name holding a line break or a tab (config names are
  // free text) is quoted: RFC 4180 allows them only inside quotes, and spreadsheets end a record
  // at a bare LF or CR. csv-stringify quotes only a whole CRLF once the delimiter is "windows".
  const options: Options = {
    escape_formulas: true,
    record_delimiter: "windows",
    quoted_match: /[\r\n\t]/,
    cast: { string: (value, context) => ((context.index ?? 0) < firstMetric ? value : { value, escape_formulas: false }) },
  };
  const header = [...report.query.groupBy, ...METRIC_COLUMNS];
  yield stringify([header], options);
  for (let at = 0; at < report.rows.length; at += rowsPerPiece) yield stringify(report.rows.slice(at, at + rowsPerPiece).map(row), options);
}
