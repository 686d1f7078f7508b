import { describe, expect, it } from "vitest";
import type { AdmitPlan } from "./admission-store.ts";
import { TollgateBudgets } from "./budgets-object.ts";
import type { DurableObjectState } from "./durable-object-types.ts";

// The Durable Object against a storage that is a Map: what it writes, what it reads back when it
// starts again, and what it forgets. (workerd runs the real thing in test/workers-budgets.e2e.test.ts.)

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 23, 12);

function fakeState(entries: Map<string, unknown>): DurableObjectState {
  return {
    storage: {
      async list<T>({ prefix }: { prefix: string }) {
        return new Map([...entries].filter(([key]) => key.startsWith(prefix)).map(([key, value]) => [key, structuredClone(value) as T]));
      },
      async put(key: string, value: unknown) {
        entries.set(key, structuredClone(value));
      },
      async delete(key: string) {
        return entries.delete(key);
      },
    },
    blockConcurrencyWhile: (callback) => callback(),
  };
}

async function call(object: TollgateBudgets, operation: string, body: unknown): Promise<unknown> {
  return (await object.fetch(new Request(`https://tollgate-budgets/${operation}`, { method: "POST", body: JSON.stringify(body) }))).json();
}

const admitPlan = (requestId: string, key: string, windowEndsAt: number): AdmitPlan => ({
  requestId,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano: 50_000,
  scopes: [{ key, scope: "route:chat", limitNano: 1_000_000, mode: "hard", windowEndsAt }],
  rates: [],
});

describe("the TollgateBudgets Durable Object", () => {
  it("stores each level with its window's end and each reservation, and starts again from them", async () => {
    const storage = new Map<string, unknown>();
    const first = new TollgateBudgets(fakeState(storage), undefined, () => now);
    await first.loaded;
    await call(first, "admit", admitPlan("req_1", "route:chat|2026-11-23", now + 12 * 3_600_000));
    await call(first, "admit", admitPlan("req_2", "route:chat|2026-11-23", now + 12 * 3_600_000));
    await call(first, "settle", { requestId: "req_1", now, scopeKeys: ["route:chat|2026-11-23"], actualNano: 16_000, tokens: 7, rateScopes: [] });
    expect(storage.get("level:route:chat|2026-11-23")).toEqual({ spentNano: 16_000, reservedNano: 50_000, windowEndsAt: now + 12 * 3_600_000 });
    expect([...storage.keys()].filter((key) => key.startsWith("reservation:"))).toEqual(["reservation:req_2"]);

    const second = new TollgateBudgets(fakeState(storage), undefined, () => now);
    await second.loaded;
    expect(await call(second, "levels", { scopeKeys: ["route:chat|2026-11-23"], now })).toEqual([{ spentNano: 16_000, reservedNano: 50_000 }]);
  });

  it("forgets levels 40 days after their window ended, and keeps `total` windows", async () => {
    const storage = new Map<string, unknown>([
      ["level:route:chat|2026-10-01", { spentNano: 5, reservedNano: 0, windowEndsAt: Date.UTC(2026, 9, 2) }],
      ["level:route:chat|2026-11-01", { spentNano: 7, reservedNano: 0, windowEndsAt: Date.UTC(2026, 10, 2) }],
      ["level:route:chat|total", { spentNano: 9, reservedNano: 0, windowEndsAt: 0 }],
    ]);
    const object = new TollgateBudgets(fakeState(storage), undefined, () => now);
    await object.loaded;
    expect(now - Date.UTC(2026, 9, 2)).toBeGreaterThan(40 * DAY); // the first window ended 52 days ago
    // Its first operation drops it.
    expect(await call(object, "levels", { scopeKeys: ["route:chat|2026-11-01", "route:chat|total"], now })).toEqual([
      { spentNano: 7, reservedNano: 0 },
      { spentNano: 9, reservedNano: 0 },
    ]);
    expect([...storage.keys()].sort()).toEqual(["level:route:chat|2026-11-01", "level:route:chat|total"]);
  });

  it("counts a settle retried across a restart once, and drops settled markers after an hour", async () => {
    const storage = new Map<string, unknown>([["settled:req_old", now - 2 * 3_600_000]]);
    let clock = now;
    const settle = { requestId: "req_1", now, scopeKeys: ["route:chat|total"], actualNano: 16_000, tokens: 7, rateScopes: [] };
    const first = new TollgateBudgets(fakeState(storage), undefined, () => clock);
    await first.loaded;
    expect(storage.has("settled:req_old")).toBe(false); // two hours old when the object started
    await call(first, "admit", admitPlan("req_1", "route:chat|total", 0));
    await call(first, "settle", settle);
    expect(storage.get("settled:req_1")).toBe(now);

    // The answer to that settle was lost; the object restarted; the gateway retries.
    const second = new TollgateBudgets(fakeState(storage), undefined, () => clock);
    await second.loaded;
    await call(second, "settle", settle);
    expect(await call(second, "levels", { scopeKeys: ["route:chat|total"], now })).toEqual([{ spentNano: 16_000, reservedNano: 0 }]);

    // An hour and more later, the next settle drops the marker.
    clock = now + 3_600_001;
    await call(second, "settle", { ...settle, requestId: "req_2", now: clock });
    expect([...storage.keys()].filter((key) => key.startsWith("settled:"))).toEqual(["settled:req_2"]);
  });

  it("frees an expired reservation before it drops the old level it counted in (no level left negative)", async () => {
    const oldKey = "route:chat|2026-10-01";
    const storage = new Map<string, unknown>([
      [`level:${oldKey}`, { spentNano: 5, reservedNano: 50_000, windowEndsAt: Date.UTC(2026, 9, 2) }],
      ["reservation:req_stuck", { keys: [oldKey], amountNano: 50_000, expiresAt: now - 1 }],
    ]);
    const object = new TollgateBudgets(fakeState(storage), undefined, () => now);
    await object.loaded;
    await call(object, "levels", { scopeKeys: ["route:chat|total"], now });
    expect([...storage.keys()]).toEqual([]);
  });

  it("after a restart mid-minute, a settle of a request admitted before it does not take its reservation off the new token counter", async () => {
    // Reservations come back from storage, rate counters (memory only) do not. Each settle took
    // (tokens used − tokens reserved) off the new minute's counter, which never held the
    // reservation, and let more tokens per minute through than the limit (as the Redis store did
    // after a data loss: tpm-after-redis-data-loss.test.ts).
    const entries = new Map<string, unknown>();
    let id = 0;
    const tokensPlan = (): AdmitPlan => ({ requestId: `req_${++id}`, now, reservationExpiresAt: now + 120_000, amountNano: 0, scopes: [], rates: [{ scope: "route:tokens", tpm: 10_000 }], tokens: 5_000 });
    const first = new TollgateBudgets(fakeState(entries), undefined, () => now);
    await first.loaded;
    const before = [tokensPlan(), tokensPlan()];
    for (const plan of before) expect(await call(first, "admit", plan)).toMatchObject({ admitted: true });
    const second = new TollgateBudgets(fakeState(entries), undefined, () => now);
    await second.loaded;
    expect(await call(second, "admit", tokensPlan())).toMatchObject({ admitted: true }); // 5,000 held in this minute
    for (const plan of before) {
      await call(second, "settle", { requestId: plan.requestId, now, scopeKeys: [], actualNano: 0, tokens: 100, rateScopes: ["route:tokens"], reservedTokens: 5_000, admittedAt: now });
    }
    // The minute holds 5,200 of 10,000: one more admission (the count is below the limit), then none.
    const admitted: unknown[] = [];
    for (let i = 0; i < 4; i++) admitted.push(((await call(second, "admit", tokensPlan())) as { admitted: boolean }).admitted);
    expect(admitted).toEqual([true, false, false, false]);
  });

  it("answers an unknown operation with a 404", async () => {
    const object = new TollgateBudgets(fakeState(new Map()));
    await object.loaded;
    const response = await object.fetch(new Request("https://tollgate-budgets/spend", { method: "POST", body: "{}" }));
    expect(response.status).toBe(404);
  });
});
