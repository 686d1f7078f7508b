import { describe, expect, it } from "vitest";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { windowOf } from "./budget-window.ts";

// A window's end is the local midnight of the day after its last, asked for as day + 1 (or + 7,
// or month + 1). Was: that date was not made a real one (day 32, month 13) before it was
// compared with the calendar date found, so it never matched, the "midnight does not exist"
// search ran and returned midnight + 3 h: every window ending at a month end reset three hours
// late, and a running gateway charged those three hours to the old window.

// windowOf caches a window per (window, zone) until it ends, so each test uses its own zone.

describe("windows that end at a month boundary", () => {
  it("day window on Jan 31 (UTC) resets at Feb 1 00:00Z", () => {
    expect(windowOf({ window: "day", timeZone: "Etc/UTC" }, Date.parse("2026-01-31T12:00:00Z")).resetsAt?.toISOString()).toBe("2026-02-01T00:00:00.000Z");
  });
  it("month window in December resets at Jan 1 00:00Z", () => {
    expect(windowOf({ window: "month", timeZone: "Etc/GMT" }, Date.parse("2026-12-15T12:00:00Z")).resetsAt?.toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });
  it("week window of Monday 2026-01-26 resets at Monday 2026-02-02 00:00Z", () => {
    expect(windowOf({ window: "week", timeZone: "UTC" }, Date.parse("2026-01-28T12:00:00Z")).resetsAt?.toISOString()).toBe("2026-02-02T00:00:00.000Z");
  });
  it("day window in Europe/Berlin on Mar 31 resets at Berlin midnight (2026-03-31T22:00Z)", () => {
    expect(windowOf({ window: "day", timeZone: "Europe/Berlin" }, Date.parse("2026-03-31T12:00:00Z")).resetsAt?.toISOString()).toBe("2026-03-31T22:00:00.000Z");
  });
  it("a running process charges Feb 1 00:30Z to Feb 1's window, not Jan 31's", async () => {
    const budget = { window: "day" as const, timeZone: "Europe/London" };
    windowOf(budget, Date.parse("2026-01-31T12:00:00Z")); // cached, as on any gateway serving that day
    expect(windowOf(budget, Date.parse("2026-02-01T00:30:00Z")).id).toBe("2026-02-01");
  });
});

// The money consequence: $0.003/day on gpt-4o; one request's worst case is 1,045,000 nano
// (18 input bytes x 2,500 + 100 x 10,000). Jan 31 23:00Z: two requests settle at 1,000,000 nano
// each (2,000,000 spent on Jan 31). Feb 1 00:30Z is a new day with 3,000,000 nano left. Was: the
// gateway still charged Jan 31 (1,000,000 left < 1,045,000 worst case) and answered 402.
describe("admission across a month-end midnight", () => {
  it("admits the first request of Feb 1 at 00:30Z", async () => {
    const config = budgetedConfig({ daily: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.003, window: "day", timeZone: "America/Sao_Paulo" } } });
    const clock = { now: Date.parse("2026-02-01T02:00:00Z") }; // 23:00 on Jan 31 in São Paulo (UTC-3)
    const { admit } = admissionFor(config, { now: () => clock.now });
    const request = hiRequest("daily", { maxTokens: 100 });
    const cost = { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 1_000_000, totalNano: 1_000_000, cacheSavingsNano: 0 };
    for (let settled = 0; settled < 2; settled++) await (await admit(request)).settle(makeCostRecord({ cost }));
    clock.now = Date.parse("2026-02-01T03:30:00Z"); // 00:30 on Feb 1 in São Paulo
    await expect(admit(request)).resolves.toBeDefined();
  });
});
