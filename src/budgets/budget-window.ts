import type { BudgetConfig } from "./budget-config.ts";

// Calendar windows in the budget's time zone: a "day" budget in Europe/Berlin resets at Berlin
// midnight. A window has an id (part of the store key, so a new window starts at zero without
// any reset job) and the instant it ends.

export type BudgetWindow = { id: string; resetsAt: Date | null };

type LocalDate = { year: number; month: number; day: number; weekday: number };

function localDate(instant: number, timeZone: string): LocalDate {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "numeric", day: "numeric", weekday: "short" }).formatToParts(instant);
  const get = (type: string) => parts.find((part) => part.type === type)!.value;
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(get("weekday"));
  return { year: Number(get("year")), month: Number(get("month")), day: Number(get("day")), weekday };
}

/** Milliseconds the zone is ahead of UTC at `instant`. */
function offsetMs(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(instant);
  const get = (type: string) => Number(parts.find((part) => part.type === type)!.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The UTC instant of local midnight at the start of the given local calendar date. */
function localMidnight(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  // Two passes settle the offset even when midnight is near a daylight-saving change.
  const first = guess - offsetMs(guess, timeZone);
  return guess - offsetMs(first, timeZone);
}

const pad = (value: number) => String(value).padStart(2, "0");

export function windowOf(budget: Pick<BudgetConfig, "window" | "timeZone">, now: number): BudgetWindow {
  if (budget.window === "total") return { id: "total", resetsAt: null };
  const { year, month, day, weekday } = localDate(now, budget.timeZone);
  switch (budget.window) {
    case "day":
      return { id: `${year}-${pad(month)}-${pad(day)}`, resetsAt: new Date(localMidnight(year, month, day + 1, budget.timeZone)) };
    case "week": {
      // Weeks start on Monday; the id is the Monday's date.
      const monday = new Date(Date.UTC(year, month - 1, day - weekday));
      const [y, m, d] = [monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate()];
      return { id: `week-${y}-${pad(m)}-${pad(d)}`, resetsAt: new Date(localMidnight(y, m, d + 7, budget.timeZone)) };
    }
    case "month":
      return { id: `${year}-${pad(month)}`, resetsAt: new Date(localMidnight(year, month + 1, 1, budget.timeZone)) };
  }
}
