import { describe, expect, it } from "vitest";
import type { AdmissionStore, AdmitPlan } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// A retry at now + retry-after is admitted, also where the exact wait is a whole number of seconds.
// Used to be wrong: secondsUntilRoom (admission-store.ts) worked out the rpm wait in floating point
// and rounded it up to whole seconds with no margin (the strict tpm case adds 1 ms; rpm adds none). Where the exact
// wait is a whole number of seconds, the retry lands exactly on the edge, where the estimate
// computed in floating point is a hair over: 51 × (1 − 20/60) = 34.000000000000004, + 1 > 35.
// The client does as told and is refused again (with retry-after: 1).

const rig = useRedis("review-rpm-float");
let id = 0;
const plan = (now: number, rpm: number): AdmitPlan => ({
  requestId: `req_rf_${++id}`,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano: 0,
  scopes: [],
  rates: [{ scope: "route:limited", rpm }],
});

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("rpm retry-after at a whole-second edge ($name store)", ({ make }) => {
  it("a retry at now + retry-after is admitted", async () => {
    const store = make();
    // 36 requests in 11:59, 51 in 12:00 (let through under a higher limit, since lowered to 35).
    for (let i = 0; i < 36; i++) expect(await store.admit(plan(Date.parse("2026-11-22T11:59:05Z"), 1000))).toMatchObject({ admitted: true });
    for (let i = 0; i < 51; i++) expect(await store.admit(plan(Date.parse("2026-11-22T12:00:05Z"), 1000))).toMatchObject({ admitted: true });
    const now = Date.parse("2026-11-22T12:00:32Z");
    const refused = await store.admit(plan(now, 35));
    // 48 s in exact arithmetic (12:01:20, where 51 × (1 − 1/3) = 34), but 34.000000000000004 there.
    expect(refused).toMatchObject({ admitted: false, kind: "rpm", retryAfterSeconds: 49 });
    const retryAfter = (refused as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(await store.admit(plan(now + retryAfter * 1000, 35))).toMatchObject({ admitted: true });
  });
});
