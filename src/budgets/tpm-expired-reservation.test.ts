import { describe, expect, it } from "vitest";
import type { AdmissionStore, AdmitPlan } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// A settle replaces its admission's token bound with the tokens used. On Redis that was done
// only while the request's reservation entry was there, and the entry goes when the reservation
// expires (its gateway missed two renewals in a Redis outage, or a short reservationTtlSeconds):
// the bound stayed in the minute and the tokens used were added to it, so the minute counted
// 990 + 20 and refused the next request. The memory store counted 20.

const rig = useRedis("tpm-expired-reservation");
let id = 0;
const rates = [{ scope: "route:tpm", tpm: 1000 }];
const plan = (now: number, extra: Partial<AdmitPlan> = {}): AdmitPlan => ({
  requestId: `req_tpm_${++id}`,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano: 0,
  scopes: [],
  rates,
  ...extra,
});

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("tpm of a request whose reservation expired before it settled ($name store)", ({ make }) => {
  it("counts the tokens it used, not its bound as well", async () => {
    const store = make();
    const admittedAt = Date.parse("2026-11-22T12:00:05Z");
    const first = plan(admittedAt, { tokens: 990, reservationExpiresAt: admittedAt + 1_000 });
    expect(await store.admit(first)).toMatchObject({ admitted: true });
    const settledAt = admittedAt + 10_000; // the same minute; its reservation expired at +1 s
    await store.settle({ requestId: first.requestId, now: settledAt, scopeKeys: [], actualNano: 0, tokens: 20, rateScopes: ["route:tpm"], reservedTokens: 990, admittedAt });
    // 20 tokens this minute, of 1,000: room for 10 more (990 + 20 + 10 would be refused).
    expect(await store.admit(plan(settledAt, { tokens: 10 }))).toMatchObject({ admitted: true });
  });
});
