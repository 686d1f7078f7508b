import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors/gateway-error.ts";
import { daysOf, parseCostReportQuery } from "./cost-report-query.ts";

// What a finance script writes in the query string, and the 400 it gets for each mistake:
// the parameter named, and what to write instead.

const parse = (params: Record<string, string[]>) => parseCostReportQuery(params, "2026-11-23");

function refusal(params: Record<string, string[]>): GatewayError {
  try {
    parse(params);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("the query was accepted");
}

describe("cost report query", () => {
  it("defaults to month to date, every dimension, JSON", () => {
    expect(parse({})).toEqual({ from: "2026-11-01", to: "2026-11-23", groupBy: ["day", "team", "key", "route", "provider", "model"], filters: {}, format: "json" });
    expect(parse({ to: ["2026-02-28"] }).from).toBe("2026-02-01");
  });

  it("reads groupBy as a comma list (empty for one row), filters that may repeat, and csv", () => {
    expect(parse({ groupBy: [" team , model "], team: ["a", "b"], format: ["csv"] })).toMatchObject({ groupBy: ["team", "model"], filters: { team: ["a", "b"] }, format: "csv" });
    expect(parse({ groupBy: [""] }).groupBy).toEqual([]);
  });

  it("lists every day of the range, across a month and a leap day", () => {
    expect(daysOf({ from: "2028-02-28", to: "2028-03-01" })).toEqual(["2028-02-28", "2028-02-29", "2028-03-01"]);
    expect(daysOf(parse({ from: ["2025-11-23"], to: ["2026-11-23"] }))).toHaveLength(366);
  });

  it.each([
    [{ from: ["2026-11-1"] }, "from", "YYYY-MM-DD"],
    [{ to: ["2026-02-30"] }, "to", "YYYY-MM-DD"],
    [{ from: ["2026-11-02", "2026-11-03"] }, "from", "give it once"],
    [{ from: ["2026-11-20"], to: ["2026-11-19"] }, "from", "is after to"],
    [{ from: ["2025-11-22"], to: ["2026-11-23"] }, "from", "at most 366"],
    [{ group_by: ["team"] }, "group_by", 'unknown parameter "group_by"'],
    [{ groupBy: ["team,customer"] }, "groupBy", 'unknown dimension "customer"'],
    [{ groupBy: ["team,team"] }, "groupBy", "listed twice"],
    [{ format: ["xlsx"] }, "format", '"json" or "csv"'],
    [{ team: [""] }, "team", "empty"],
    [{ route: ["gpt", ""] }, "route", "empty"],
  ])("refuses %j naming %s", (params, param, message) => {
    const error = refusal(params);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(message);
  });
});
