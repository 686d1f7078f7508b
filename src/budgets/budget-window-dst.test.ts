import { describe, expect, it } from "vitest";
import { windowOf } from "./budget-window.ts";

// In zones whose clocks spring forward AT midnight (Atlantic/Azores: 00:00 → 01:00 on the last
// Sunday of March; America/Santiago, America/Havana likewise), local midnight of the new day does
// not exist: the day starts at 01:00. localMidnight() used to return an instant one hour too early,
// so the window's resetsAt lay an hour before the instant the window actually ends (the id still
// naming the old day), and GET /v1/budgets and the 402 message named a reset time in the past.

describe("day window across a spring-forward at midnight", () => {
  it("Atlantic/Azores, 2026-03-28: resets when 2026-03-29 begins (01:00 local = 01:00Z)", () => {
    const budget = { window: "day" as const, timeZone: "Atlantic/Azores" };
    const noon = windowOf(budget, Date.parse("2026-03-28T12:00:00Z"));
    expect(noon.id).toBe("2026-03-28");
    expect(noon.resetsAt?.toISOString()).toBe("2026-03-29T01:00:00.000Z");
  });

  it("Atlantic/Azores: at 00:30Z (23:30 local on the 28th) the window has not reset yet", () => {
    const now = Date.parse("2026-03-29T00:30:00Z");
    const window = windowOf({ window: "day", timeZone: "Atlantic/Azores" }, now);
    expect(window.id).toBe("2026-03-28");
    expect(window.resetsAt!.getTime()).toBeGreaterThan(now);
  });

  it("America/Santiago, 2026-09-05: resets at 04:00Z (00:00 -04 does not exist; 01:00 -03)", () => {
    const window = windowOf({ window: "day", timeZone: "America/Santiago" }, Date.parse("2026-09-05T15:00:00Z"));
    expect(window.resetsAt?.toISOString()).toBe("2026-09-06T04:00:00.000Z");
  });
});
