import { describe, expect, it } from "vitest";
import type { AdmitPlan } from "./admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// Redis restarts empty (no persistence) while requests are in flight: a settle of a request admitted
// before corrects only what this Redis still holds. Used to be wrong: the SETTLE script corrected
// the admission minute's tpm counter by (tokens used − tokens reserved) whenever that counter
// EXISTS, assuming the admission's reservation is in it; after the restart the counter exists
// again only because LATER admissions created it, so each old settle subtracts a reservation
// the counter never held: it erases the new requests' reservations and drives the counter
// negative, and the minute then lets through more than its tpm.

const rig = useRedis("review-tpm-loss");
let id = 0;
const now = Date.parse("2026-11-22T12:00:10Z");
const plan = (): AdmitPlan => ({
  requestId: `req_tl_${++id}`,
  now,
  reservationExpiresAt: now + 120_000,
  amountNano: 0,
  scopes: [],
  rates: [{ scope: "route:tokens", tpm: 10_000 }],
  tokens: 5_000,
});

describe("tpm after Redis lost its data mid-minute", () => {
  it("a settle of a request admitted before the loss does not subtract its reservation from the new counter", async () => {
    const prefix = `${rig.prefix}${Math.random()}`;
    const store = new RedisAdmissionStore(rig.redis, prefix);
    const before = [plan(), plan()];
    for (const p of before) expect(await store.admit(p)).toMatchObject({ admitted: true });
    // Redis restarts empty.
    const keys = await rig.redis.keys(`${prefix}*`);
    await rig.redis.del(...keys);
    // One request after the restart holds its 5,000-token bound in this minute.
    const after = plan();
    expect(await store.admit(after)).toMatchObject({ admitted: true });
    // The two older ones finish, each having used 100 tokens.
    for (const p of before) await store.settle({ requestId: p.requestId, now, scopeKeys: [], actualNano: 0, tokens: 100, rateScopes: ["route:tokens"], reservedTokens: 5_000, admittedAt: now });
    const counter = Number(await rig.redis.get(`${prefix}{tollgate:budgets}:rate:route:tokens|tpm|${Math.floor(now / 60_000)}`));
    // What the minute really holds: the new request's 5,000 bound and the old ones' 200 tokens.
    expect(counter).toBe(5_200);
  });
});
