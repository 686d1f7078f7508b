import type { BudgetConfig } from "./budget-config.ts";

// Calendar windows in the budget's time zone: a "day" budget in Europe/Berlin resets at Berlin
// midnight. A window has an id (part of the store key, so a new window starts at zero without
// any reset job) and the instant it ends.

export type BudgetWindow = { id: string; resetsAt: Date | null };

type LocalDate = { year: number; month: number; day: number; weekday: number };

// Building an Intl.DateTimeFormat costs ~100 µs; one per zone is kept. And a window, once
// computed, is reused until it ends: admission asks for it on every request.
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const clockFormats = new Map<string, Intl.DateTimeFormat>();

function format(cache: Map<string, Intl.DateTimeFormat>, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let formatter = cache.get(timeZone);
  if (!formatter) cache.set(timeZone, (formatter = new Intl.DateTimeFormat("en-US", { timeZone, ...options })));
  return formatter;
}

function localDate(instant: number, timeZone: string): LocalDate {
  const parts = format(dateFormats, timeZone, { year: "numeric", month: "numeric", day: "numeric", weekday: "short" }).formatToParts(instant);
  const get = (type: string) => parts.find((part) => part.type === type)!.value;
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(get("weekday"));
  return { year: Number(get("year")), month: Number(get("month")), day: Number(get("day")), weekday };
}

/** Milliseconds the zone is ahead of UTC at `instant`. */
function offsetMs(instant: number, timeZone: string): number {
  const parts = format(clockFormats, timeZone, {
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

/**
 * The UTC instant of local midnight at the start of the given local calendar date. The date may
 * run past its month (day 32, month 13: the callers add a day, a week or a month): it is made a
 * real date first, or the check below never matches and the window ends three hours late.
 */
function localMidnight(rawYear: number, rawMonth: number, rawDay: number, timeZone: string): number {
  const guess = Date.UTC(rawYear, rawMonth - 1, rawDay);
  const normal = new Date(guess);
  const [year, month, day] = [normal.getUTCFullYear(), normal.getUTCMonth() + 1, normal.getUTCDate()];
  // Two passes settle the offset even when midnight is near a daylight-saving change.
  const first = guess - offsetMs(guess, timeZone);
  const midnight = guess - offsetMs(first, timeZone);
  if (isDay(localDate(midnight, timeZone), year, month, day)) return midnight;
  // Where clocks spring forward at midnight (Atlantic/Azores, America/Santiago), 00:00 does not
  // exist and the instant above is still the day before: the day begins at the change, found
  // to the second within the next three hours.
  let before = midnight;
  let after = midnight + 3 * 3_600_000;
  while (after - before > 1000) {
    const middle = before + Math.max(1000, Math.floor((after - before) / 2000) * 1000);
    if (isDay(localDate(middle, timeZone), year, month, day)) after = middle;
    else before = middle;
  }
  return after;
}

function isDay(date: LocalDate, year: number, month: number, day: number): boolean {
  return date.year === year && date.month === month && date.day === day;
}

const pad = (value: number) => String(value).padStart(2, "0");

/** A scope's store key in a window, e.g. `route:support|2026-11-22`: a new window starts at zero. */
export function windowKey(scope: string, window: BudgetWindow): string {
  return `${scope}|${window.id}`;
}

type Cached = { window: BudgetWindow; startsAt: number };
const recent = new Map<string, Cached>();

export function windowOf(budget: Pick<BudgetConfig, "window" | "timeZone">, now: number): BudgetWindow {
  if (budget.window === "total") return { id: "total", resetsAt: null };
  const cacheKey = `${budget.window}|${budget.timeZone}`;
  const cached = recent.get(cacheKey);
  if (cached && now >= cached.startsAt && now < cached.window.resetsAt!.getTime()) return cached.window;
  const window = computeWindow(budget, now);
  // Any instant from `now` until the window ends is in the same window (an earlier one may not be).
  recent.set(cacheKey, { window, startsAt: now });
  return window;
}

function computeWindow(budget: Pick<BudgetConfig, "window" | "timeZone">, now: number): BudgetWindow {
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
    default:
      throw new Error(`unknown budget window ${String(budget.window)}`);
  }
}
