import { describe, expect, it } from "vitest";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";

// A settle or a sweep that found its budget scope key gone (Redis restarted empty, an operator
// deleted it, its window closed 40 days ago) made it again with HINCRBY: without a TTL, so it
// stayed in Redis for ever, and a released hold left it with a negative reservation (room in the
// budget nobody paid for). A settle now makes it again with the expiry its admission sets (a
// past window's goes at once); a released hold of a key that is gone touches nothing.

const rig = useRedis("settle-dropped-key");
const config = budgetedConfig({ support: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 1, window: "day" } } });
const DAY = 86_400_000;
/** An admission's expiry for a day window: 40 days after the day ends (UTC). */
const keptUntil = (day: string) => Date.parse(`${day}T00:00:00Z`) + DAY + 40 * DAY;
const costing = (totalNano: number) => makeCostRecord({ cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: totalNano, totalNano, cacheSavingsNano: 0 } });

function gateway(start: string) {
  const prefix = `${rig.prefix}${Math.random()}`;
  const store = new RedisAdmissionStore(rig.redis, prefix);
  const clock = { now: Date.parse(start) };
  const { admit } = admissionFor(config, { store, now: () => clock.now });
  const scopeKey = (day: string) => `${prefix}{tollgate:budgets}:scope:route:support|${day}`;
  return { prefix, store, clock, admit, scopeKey, level: (day: string) => store.levels([`route:support|${day}`], clock.now) };
}

describe("a budget scope key gone before its request settles (Redis)", () => {
  it("after Redis restarted empty, the settle counts the spend in a key that expires as an admitted one does", async () => {
    const { prefix, admit, scopeKey, level } = gateway("2026-11-22T12:00:00Z");
    const ticket = await admit(hiRequest("support"));
    await rig.redis.del(...(await rig.redis.keys(`${prefix}*`)));
    await ticket.settle(costing(70_000));
    expect(await level("2026-11-22")).toEqual([{ spentNano: 70_000, reservedNano: 0 }]);
    expect(await rig.redis.call("PEXPIRETIME", scopeKey("2026-11-22"))).toBe(keptUntil("2026-11-22"));
  });

  it("deleted by hand while the request ran: the settle neither leaves a negative hold nor a key without expiry", async () => {
    const { admit, scopeKey, level } = gateway("2026-11-22T12:00:00Z");
    const ticket = await admit(hiRequest("support"));
    await rig.redis.del(scopeKey("2026-11-22"));
    await ticket.settle(costing(70_000));
    expect(await level("2026-11-22")).toEqual([{ spentNano: 70_000, reservedNano: 0 }]);
    expect(await rig.redis.call("PEXPIRETIME", scopeKey("2026-11-22"))).toBe(keptUntil("2026-11-22"));
  });

  it("a hold that expires after its key was deleted is not released into a new key", async () => {
    const { clock, admit, scopeKey, level } = gateway("2026-11-22T12:00:00Z");
    await admit(hiRequest("support")); // never settled: its gateway died
    await rig.redis.del(scopeKey("2026-11-22"));
    clock.now += 3 * 60_000; // past the reservation's 2 minutes; reading the levels sweeps it
    expect(await level("2026-11-22")).toEqual([{ spentNano: 0, reservedNano: 0 }]);
    expect(await rig.redis.exists(scopeKey("2026-11-22"))).toBe(0);
  });

  it("a settle long after its window's key expired leaves no key for that window, and this window's spend exact", async () => {
    const { clock, admit, scopeKey, level } = gateway("2026-09-01T12:00:00Z");
    const late = await admit(hiRequest("support"));
    await rig.redis.del(scopeKey("2026-09-01")); // what Redis does 40 days after the window
    clock.now = Date.parse("2026-11-22T12:00:00Z");
    const current = await admit(hiRequest("support"));
    await late.settle(costing(30_000)); // a settlement kept in a file, replayed 82 days on
    await current.settle(costing(70_000));
    expect(await rig.redis.exists(scopeKey("2026-09-01"))).toBe(0);
    expect(await level("2026-11-22")).toEqual([{ spentNano: 70_000, reservedNano: 0 }]);
    expect(await rig.redis.call("PEXPIRETIME", scopeKey("2026-11-22"))).toBe(keptUntil("2026-11-22"));
  });

  it("a settlement kept by an earlier version (no window ends) settles only keys still there", async () => {
    const { store, scopeKey, level } = gateway("2026-11-22T12:00:00Z");
    const now = Date.parse("2026-11-22T12:00:00Z");
    await store.settle({ requestId: "req_kept_before", now, scopeKeys: ["route:support|2026-11-22"], actualNano: 70_000, tokens: 10, rateScopes: [] });
    expect(await rig.redis.exists(scopeKey("2026-11-22"))).toBe(0);
    expect(await level("2026-11-22")).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });
});
