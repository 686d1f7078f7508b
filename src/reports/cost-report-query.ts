import { z } from "zod";
import { GatewayError } from "../errors/gateway-error.ts";

// GET /v1/admin/costs?from=&to=&groupBy=&team=&key=&route=&provider=&model=&format=
// What a cost report covers and how it is cut, read from the query string. Every mistake is a
// 400 naming the parameter and what to write instead: finance scripts are written once and run
// unattended, so a typo must fail loudly rather than return an unfiltered report.

export const REPORT_DIMENSIONS = ["day", "team", "key", "route", "provider", "model"] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

/** Filters on the dimensions a record carries (not `day`: that is `from`/`to`). */
export const FILTER_DIMENSIONS = ["team", "key", "route", "provider", "model"] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export type CostReportQuery = {
  /** First and last UTC day, `YYYY-MM-DD`, both included. */
  from: string;
  to: string;
  groupBy: ReportDimension[];
  /** A filter keeps the rows whose value is any of those given (the parameter may repeat). */
  filters: Partial<Record<FilterDimension, string[]>>;
  format: "json" | "csv";
};

/** The longest report: a year, leap day included. Each day is one read of the store. */
export const MAX_REPORT_DAYS = 366;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

const day = z.string().refine((text) => DAY_PATTERN.test(text) && dayNumber(text) !== undefined, {
  message: "must be a UTC day written YYYY-MM-DD, e.g. 2026-11-01",
});

/** A parameter given at most once. */
const single = z
  .array(z.string())
  .max(1, { message: "give it once" })
  .optional()
  .transform((values) => values?.[0]);

const querySchema = z.strictObject({
  from: single.pipe(day.optional()),
  to: single.pipe(day.optional()),
  groupBy: single,
  format: single.pipe(z.enum(["json", "csv"], { message: 'must be "json" or "csv"' }).optional()),
  team: z.array(z.string()).optional(),
  key: z.array(z.string()).optional(),
  route: z.array(z.string()).optional(),
  provider: z.array(z.string()).optional(),
  model: z.array(z.string()).optional(),
});

/** Reads the query of a cost report; `today` is the current UTC day, the default end. */
export function parseCostReportQuery(params: Record<string, string[]>, today: string): CostReportQuery {
  const parsed = querySchema.safeParse(params);
  if (!parsed.success) throw queryError(parsed.error.issues[0]!);
  const { from: asked, to: askedTo, groupBy, format = "json", ...filterValues } = parsed.data;
  const to = askedTo ?? today;
  // Month to date by default: what a provider's invoice covers so far.
  const from = asked ?? `${to.slice(0, 8)}01`;
  const days = dayNumber(to)! - dayNumber(from)! + 1;
  if (days < 1) throw new GatewayError("invalid_request", `from (${from}) is after to (${to}): give a from on or before to`, { param: "from" });
  if (days > MAX_REPORT_DAYS) {
    throw new GatewayError("invalid_request", `the report spans ${days} days; at most ${MAX_REPORT_DAYS} are read at once: ask for a year or less and join the reports`, { param: "from" });
  }
  const filters: CostReportQuery["filters"] = {};
  for (const dimension of FILTER_DIMENSIONS) {
    const values = filterValues[dimension];
    if (!values) continue;
    // `team=` from a script's unset variable would match nothing and report $0: no name is empty.
    if (values.includes("")) throw new GatewayError("invalid_request", `${dimension}: empty; give a ${dimension} name, or leave the parameter out to keep every ${dimension}`, { param: dimension });
    filters[dimension] = values;
  }
  return { from, to, groupBy: groupBy === undefined ? [...REPORT_DIMENSIONS] : parseGroupBy(groupBy), filters, format };
}

/** Every UTC day from `from` to `to`, both included. */
export function daysOf(query: Pick<CostReportQuery, "from" | "to">): string[] {
  const days: string[] = [];
  for (let at = dayNumber(query.from)!; at <= dayNumber(query.to)!; at++) days.push(new Date(at * 86_400_000).toISOString().slice(0, 10));
  return days;
}

function parseGroupBy(text: string): ReportDimension[] {
  const names = text.split(",").map((name) => name.trim()).filter((name) => name !== "");
  const dimensions: ReportDimension[] = [];
  for (const name of names) {
    if (!(REPORT_DIMENSIONS as readonly string[]).includes(name)) {
      throw new GatewayError("invalid_request", `groupBy: unknown dimension "${name}"; use a comma-separated list of ${REPORT_DIMENSIONS.join(", ")} (empty for one row of totals)`, { param: "groupBy" });
    }
    if (dimensions.includes(name as ReportDimension)) throw new GatewayError("invalid_request", `groupBy: "${name}" is listed twice; list each dimension once`, { param: "groupBy" });
    dimensions.push(name as ReportDimension);
  }
  return dimensions;
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` day, or undefined for one that does not exist (2026-02-30). */
function dayNumber(text: string): number | undefined {
  const [year, month, date] = text.split("-").map(Number) as [number, number, number];
  const time = Date.UTC(year, month - 1, date);
  const back = new Date(time);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== date) return undefined;
  return time / 86_400_000;
}

function queryError(issue: z.core.$ZodIssue): GatewayError {
  if (issue.code === "unrecognized_keys") {
    const name = issue.keys[0]!;
    return new GatewayError("invalid_request", `unknown parameter "${name}"; a cost report takes from, to, groupBy, ${FILTER_DIMENSIONS.join(", ")} and format`, { param: name });
  }
  const param = String(issue.path[0] ?? "query");
  return new GatewayError("invalid_request", `${param}: ${issue.message}`, { param });
}
