import { describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { aggregateIncrements } from "./ledger-store.ts";

describe("the daily totals a record adds to", () => {
  it("count a billed call before a fallback (attemptOf) as spend of its request, not as a request or an error", () => {
    const failed = makeCostRecord({ requestId: "req_a.1", attemptOf: "req_a", status: "error", errorType: "timeout" });
    const answered = makeCostRecord({ requestId: "req_a" });
    const totals = new Map<string, number>();
    for (const record of [failed, answered]) for (const [metric, value] of aggregateIncrements(record)) totals.set(metric, (totals.get(metric) ?? 0) + value);
    expect(totals.get("requests")).toBe(1);
    expect(totals.get("errors")).toBeUndefined();
    expect(totals.get("cost_nano")).toBe(2 * 2_140_000);
    expect(totals.get("input_tokens")).toBe(2 * 176);
  });
});
