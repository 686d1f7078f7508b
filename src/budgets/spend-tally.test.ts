import { describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { budgetedConfig } from "../../test/support/admission-rig.ts";
import { SpendTally } from "./spend-tally.ts";

// The spend a restarted gateway rebuilds from its ledger file, per budget scope and window.

const config = budgetedConfig({
  daily: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 5, window: "day" } },
  forever: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 5, window: "total" } },
});

describe("SpendTally", () => {
  it("keeps the windows still running when the gateway starts, and every `total`; ended days are left out", () => {
    const tally = new SpendTally(config, Date.parse("2026-11-23T12:00:00Z"));
    for (const [route, time] of [
      ["daily", "2026-11-21T23:59:59.000Z"],
      ["daily", "2026-11-22T10:00:00.000Z"],
      ["daily", "2026-11-23T00:00:00.000Z"],
      ["daily", "2026-11-23T11:00:00.000Z"],
      ["forever", "2025-01-01T00:00:00.000Z"],
      ["forever", "2026-11-23T11:00:00.000Z"],
    ]) {
      tally.add(makeCostRecord({ route: route!, time: time! })); // 2,140,000 nano each
    }
    // Was: a level for each of 2026-11-21 and 2026-11-22 too, kept in memory for good.
    expect(Object.fromEntries(tally.totals)).toEqual({ "route:daily|2026-11-23": 4_280_000, "route:forever|total": 4_280_000 });
  });

  it("lets go of a window once a record of a later one arrives, while the gateway runs", () => {
    // Was: only windows that had ended before the start were left out; a running gateway kept
    // every day after that, for every budgeted scope, and wrote them into each checkpoint.
    const started = Date.parse("2026-01-01T08:00:00Z");
    const tally = new SpendTally(config, started);
    for (let day = 0; day < 120; day++) tally.add(makeCostRecord({ route: "daily", time: new Date(started + day * 86_400_000).toISOString() }));
    tally.add(makeCostRecord({ route: "forever", time: new Date(started).toISOString() }));
    expect(Object.fromEntries(tally.totals)).toEqual({ "route:daily|2026-04-30": 2_140_000, "route:forever|total": 2_140_000 });
  });
});
