import { describe, expect, it } from "vitest";
import type { AdmitPlan, ScopeLevel } from "./admission-store.ts";
import { MemoryAdmissionStore, type AdmissionJournal, type Reservation } from "./memory-admission-store.ts";

// The journal is what the Workers' Durable Object writes to its storage: replaying it into a
// new store must give back exactly the state the old one had.

class MapJournal implements AdmissionJournal {
  readonly levels = new Map<string, ScopeLevel>();
  readonly reservations = new Map<string, Reservation>();
  readonly settledIds: string[] = [];
  settled(requestId: string): void {
    this.settledIds.push(requestId);
  }
  level(scopeKey: string, level: ScopeLevel | undefined): void {
    if (level) this.levels.set(scopeKey, { ...level });
    else this.levels.delete(scopeKey);
  }
  reservation(requestId: string, reservation: Reservation | undefined): void {
    if (reservation) this.reservations.set(requestId, { ...reservation });
    else this.reservations.delete(requestId);
  }
}

const now = 1_795_000_000_000;
const plan = (requestId: string, amountNano: number): AdmitPlan => ({
  requestId,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano,
  scopes: [{ key: "route:chat|total", scope: "route:chat", limitNano: 1_000_000, mode: "hard", windowEndsAt: 0 }],
  rates: [],
});

describe("MemoryAdmissionStore's journal", () => {
  it("records every change of a level and a reservation, and a store restored from it holds the same state", async () => {
    const journal = new MapJournal();
    const store = new MemoryAdmissionStore(journal);
    await store.admit(plan("req_1", 300_000));
    await store.admit(plan("req_2", 200_000));
    await store.settle({ requestId: "req_1", now, scopeKeys: ["route:chat|total"], actualNano: 120_000, tokens: 0, rateScopes: [] });
    await store.extend(["req_2"], now + 240_000);
    expect(journal.levels.get("route:chat|total")).toEqual({ spentNano: 120_000, reservedNano: 200_000 });
    expect([...journal.reservations.keys()]).toEqual(["req_2"]);
    expect(journal.reservations.get("req_2")!.expiresAt).toBe(now + 240_000);

    expect(journal.settledIds).toEqual(["req_1"]);
    const restored = new MemoryAdmissionStore();
    restored.restore(journal.levels, journal.reservations, journal.settledIds);
    // A retried settle of req_1 counts nothing again in the restored store.
    await restored.settle({ requestId: "req_1", now, scopeKeys: ["route:chat|total"], actualNano: 120_000, tokens: 0, rateScopes: [] });
    expect(await restored.levels(["route:chat|total"], now)).toEqual(await store.levels(["route:chat|total"], now));
    // The budget it enforces is the same: 120,000 spent + 200,000 held + 700,000 > 1,000,000…
    expect(await restored.admit(plan("req_3", 700_000))).toMatchObject({ admitted: false, reason: "budget" });
    // …and the restored reservation still frees itself when its time is up.
    expect(await restored.levels(["route:chat|total"], now + 240_001)).toEqual([{ spentNano: 120_000, reservedNano: 0 }]);
  });
});

describe("MemoryAdmissionStore over months", () => {
  it("drops the levels of windows that ended more than 40 days ago, and says so to its journal", async () => {
    const journal = new MapJournal();
    const store = new MemoryAdmissionStore(journal);
    const day = (key: string, endsAt: number, at: number): AdmitPlan => ({
      ...plan(`req_${key}_${at}`, 1_000),
      now: at,
      reservationExpiresAt: at + 120_000,
      scopes: [{ key, scope: "route:chat", limitNano: 1_000_000, mode: "hard", windowEndsAt: endsAt }],
    });
    const settle = (requestId: string, key: string, at: number) =>
      store.settle({ requestId, now: at, scopeKeys: [key], actualNano: 500, tokens: 0, rateScopes: [] });
    await store.admit(day("route:chat|2026-10-01", Date.UTC(2026, 9, 2), Date.UTC(2026, 9, 1, 12)));
    await settle(`req_route:chat|2026-10-01_${Date.UTC(2026, 9, 1, 12)}`, "route:chat|2026-10-01", Date.UTC(2026, 9, 1, 12));
    await store.admit(day("route:chat|total", 0, Date.UTC(2026, 9, 1, 12)));
    expect([...journal.levels.keys()].sort()).toEqual(["route:chat|2026-10-01", "route:chat|total"]);
    // 52 days after that window ended, any operation drops its level; `total` stays.
    await store.admit(day("route:chat|2026-11-23", Date.UTC(2026, 10, 24), now));
    expect([...journal.levels.keys()].sort()).toEqual(["route:chat|2026-11-23", "route:chat|total"]);
    expect(await store.levels(["route:chat|2026-10-01"], now)).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });
});
