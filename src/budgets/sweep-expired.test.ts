import { describe, expect, it } from "vitest";
import type { AdmissionStore, AdmitPlan } from "../../src/budgets/admission-store.ts";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";
import { RedisAdmissionStore } from "../../src/budgets/redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// A crashed gateway leaves its reservations to expire. The Redis scripts used to free at most
// 100 expired reservations per call and then check the budget, so after a crash with more than
// 100 requests in flight, admissions were refused with 402 for reservations that had already
// expired, and GET /v1/budgets reported them as held. Every store must free all of them.

const rig = useRedis("review-sweep");
const now = Date.parse("2026-11-22T12:00:00Z");
const scope = { key: "route:chat|total", scope: "route:chat", limitNano: 200_000, mode: "hard" as const, windowEndsAt: 0 };
const plan = (requestId: string, amountNano: number, at: number): AdmitPlan => ({
  requestId,
  now: at,
  reservationExpiresAt: at + 120_000,
  amountNano,
  scopes: [scope],
  rates: [],
});

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("expired reservations of a crashed gateway on the $name store", ({ make }) => {
  async function crashedGateway() {
    const store = make();
    // 200 requests in flight on a gateway that then dies: they fill the budget.
    for (let i = 0; i < 200; i++) expect(await store.admit(plan(`req_dead_${i}`, 1_000, now))).toMatchObject({ admitted: true });
    return { store, later: now + 121_000 }; // every one of them has expired
  }
  it("no longer refuse an admission once expired", async () => {
    const { store, later } = await crashedGateway();
    expect(await store.admit(plan("req_alive", 150_000, later))).toMatchObject({ admitted: true });
  });
  it("no longer show as held once expired", async () => {
    const { store, later } = await crashedGateway();
    expect(await store.levels([scope.key], later)).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });
});
