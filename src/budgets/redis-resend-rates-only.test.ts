import { describe, expect, it } from "vitest";
import type { AdmitPlan } from "./admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// The admission script knows a resent admission (ioredis resends a command whose reply a dropped
// connection lost: see redis-admit-resent.test.ts) by the reservation entry it wrote. Was: a
// request on a route with rate limits but no budget wrote none, so its resend counted the request,
// and its token bound, twice. rpm 2: one request, resent once, then a second request: admitted.

const rig = useRedis("resend-rates-only");
const now = Date.parse("2026-11-22T12:00:10Z");
const plan = (requestId: string): AdmitPlan => ({
  requestId,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano: 0,
  scopes: [],
  rates: [{ scope: "route:chat", rpm: 2 }],
});

describe("a rates-only admission run twice for one request", () => {
  it("counts the request once", async () => {
    const store = new RedisAdmissionStore(rig.redis, `${rig.prefix}x`);
    expect(await store.admit(plan("req_1"))).toMatchObject({ admitted: true });
    expect(await store.admit(plan("req_1"))).toMatchObject({ admitted: true }); // the resend
    expect(await store.admit(plan("req_2"))).toMatchObject({ admitted: true });
  });
});
