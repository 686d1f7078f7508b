import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "../../test/support/redis-server.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { PriceBook } from "../metering/price-book.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { Admission } from "./admission.ts";
import { windowKey, windowOf } from "./budget-window.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";

// Admission on its own, with an injected clock, against both stores: what the embedded store
// guarantees in one process, the Redis scripts guarantee across instances.

// gpt-4o: $2.50 input, $10 output per 1M = 2500 / 10,000 nano per token.
// "hi" is 2 bytes; with 8 bytes of margin per message and 8 per request: 18 input tokens at most.
// max_tokens 100: worst case 18 × 2500 + 100 × 10,000 = 1,045,000 nano.
const WORST = 1_045_000;

const config = resolveConfig(
  {
    providers: {
      openai: { type: "openai", apiKey: { env: "K" } },
      gpu: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1" },
      pricedGpu: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1", pricing: { default: { inputPerMillion: 0.1, outputPerMillion: 0.4 } } },
      // Optional, and its key is not set: never called.
      keyless: { type: "anthropic", apiKey: { env: "KEYLESS" }, optional: true },
    },
    routes: {
      "priced-local": { targets: [{ provider: "pricedGpu", model: "llama" }], budget: { usd: 1, window: "day" } },
      // An unpriced local decoder on a budgeted route: it reserves nothing (and must settle cleanly).
      local: { targets: [{ provider: "gpu", model: "llama" }], budget: { usd: 1, window: "day" } },
      daily: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.003, window: "day" } },
      soft: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.0015, window: "day", mode: "soft" } },
      capped: { targets: [{ provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: 0.0005 },
      limited: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { rpm: 3 } },
      tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 1000 } },
      // claude-opus-4-1 ($15 / $75 per 1M, 1.1× in the US) would cost 8,547,000 nano at most.
      "keyless-capped": { targets: [{ provider: "keyless", model: "claude-opus-4-1" }, { provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: 0.0015 },
      "keyless-budgeted": { targets: [{ provider: "keyless", model: "claude-opus-4-1" }, { provider: "openai", model: "gpt-4o" }], budget: { usd: 0.003, window: "day" } },
      "all-keyless": { targets: [{ provider: "keyless", model: "claude-opus-4-1" }], budget: { usd: 0.003, window: "day" } },
      // gpt-4o's worst case (1,045,000 nano) leaves 55,000 under the cap; gpt-4o-mini's is 62,700.
      "capped-pair": { targets: [{ provider: "openai", model: "gpt-4o" }, { provider: "openai", model: "gpt-4o-mini" }], maxCostPerRequestUsd: 0.0011 },
      berlin: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.002, window: "day", timeZone: "Europe/Berlin" } },
    },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}`, budget: { usd: 1, window: "month" } }],
    teams: { search: { budget: { usd: 0.005, window: "week" } } },
  },
  { K: "sk" },
);
const caller = { kind: "key" as const, key: config.keys[0]! };
const request = (maxTokens = 100): ChatRequest => ({
  route: "daily",
  stream: false,
  streamUsage: false,
  maxTokens,
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
});

let redisServer: RedisHandle;
let redis: Redis;
beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
});
afterAll(async () => {
  redis?.disconnect();
  await redisServer?.stop();
});

describe.each([
  { name: "memory", store: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", store: (): AdmissionStore => new RedisAdmissionStore(redis, uniquePrefix("admission")) },
])("admission on the $name store", ({ store: makeStore }) => {
  function setup(start = Date.parse("2026-11-22T12:00:00Z")) {
    const clock = { now: start };
    const store = makeStore();
    const admission = new Admission({ config, store, prices: new PriceBook(config.providers), now: () => clock.now });
    let id = 0;
    const admit = (routeName: string, maxTokens?: number) =>
      admission.admit({ requestId: `req_${++id}`, caller, routeName, route: config.routes[routeName]!, request: request(maxTokens) });
    return { clock, store, admission, admit };
  }

  it("reserves the worst case in every scope, rejects with 402 naming scope, limit, spend and reset, and settles to the actual cost", async () => {
    const { admit, store, clock } = setup();
    const first = await admit("daily");
    const second = await admit("daily");
    // 3,000,000 nano: two worst cases (2,090,000) fit, a third does not.
    const refused = await admit("daily").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ status: 402, code: "budget_exceeded" });
    expect((refused as Error).message).toBe(
      "budget exceeded for route:daily: limit $0.003 per day, spent $0 (and $0.00209 held by requests in flight); " +
        "this request could cost up to $0.001045; resets at 2026-11-23T00:00:00Z",
    );
    const keys = ["route:daily|2026-11-22", "key:app|2026-11", "team:search|week-2026-11-16"];
    expect(await store.levels(keys, clock.now)).toEqual(keys.map(() => ({ spentNano: 0, reservedNano: 2 * WORST })));

    await first.settle(makeCostRecord({ cost: { inputNano: 5000, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 40_000, totalNano: 45_000, cacheSavingsNano: 0 } }));
    await first.settle(undefined); // a second settle changes nothing
    expect(await store.levels(keys, clock.now)).toEqual(keys.map(() => ({ spentNano: 45_000, reservedNano: WORST })));
    expect(second.remainingNano(45_000)).toBe(3_000_000 - WORST - 45_000); // the tightest scope: the route
    await second.settle(undefined);
    expect((await store.levels(keys, clock.now))[0]).toEqual({ spentNano: 45_000, reservedNano: 0 });
  });

  it("a reservation that is never settled frees itself; settling late still records the cost", async () => {
    const { admit, store, clock } = setup();
    const ticket = await admit("daily");
    await admit("daily");
    await expect(admit("daily")).rejects.toMatchObject({ status: 402 });
    // Nothing renews them here (the keeper's timer runs on real time, 40 s away), as after a
    // crash: reservations live 120 s past their last renewal.
    clock.now += 120_001;
    expect((await store.levels(["route:daily|2026-11-22"], clock.now))[0]).toEqual({ spentNano: 0, reservedNano: 0 });
    await admit("daily");
    await ticket.settle(makeCostRecord({ cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 70_000, totalNano: 70_000, cacheSavingsNano: 0 } }));
    expect((await store.levels(["route:daily|2026-11-22"], clock.now))[0]).toEqual({ spentNano: 70_000, reservedNano: WORST });
  });

  it("keeps a running request's reservation past its TTL, and lets it go once settled", async () => {
    // A 1 s TTL on the real clock: renewed every third of a second while the request runs.
    const shortLived = { ...config, server: { ...config.server, reservationTtlSeconds: 1 } };
    const store = makeStore();
    const admission = new Admission({ config: shortLived, store, prices: new PriceBook(config.providers) });
    const ticket = await admission.admit({ requestId: `req_long_${Math.random()}`, caller, routeName: "daily", route: config.routes.daily!, request: request() });
    const scopeKeys = admission.scopesFor(caller, "daily").map(({ scope, budget }) => windowKey(scope, windowOf(budget, Date.now())));
    await new Promise((resolve) => setTimeout(resolve, 2_200)); // more than twice the TTL
    expect(await store.levels(scopeKeys, Date.now())).toEqual(scopeKeys.map(() => ({ spentNano: 0, reservedNano: WORST })));
    await ticket.settle(makeCostRecord({ cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 30_000, totalNano: 30_000, cacheSavingsNano: 0 } }));
    expect(admission.keeper.size).toBe(0);
    expect(await store.levels(scopeKeys, Date.now())).toEqual(scopeKeys.map(() => ({ spentNano: 30_000, reservedNano: 0 })));
  });

  it("a day window rolls over at midnight in its time zone", async () => {
    const { admit, clock } = setup(Date.parse("2026-11-22T22:59:59Z")); // 23:59:59 in Berlin
    const spend = async () => (await admit("berlin")).settle(makeCostRecord({ cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 1_900_000, cacheSavingsNano: 0 } }));
    await spend();
    await expect(admit("berlin")).rejects.toThrow(/resets at 2026-11-22T23:00:00Z/);
    clock.now = Date.parse("2026-11-22T23:00:00Z"); // midnight in Berlin: a new day
    await spend();
  });

  it("a zero reservation (an unpriced model) admits and settles cleanly", async () => {
    const { admission, store } = setup();
    const ticket = await admission.admit({ requestId: "req_zero", caller, routeName: "local", route: config.routes.local!, request: { ...request(), maxTokens: undefined } });
    expect(ticket.outputBound).toBeUndefined(); // nothing was reserved for its output
    await ticket.settle(undefined);
    expect(await store.levels([`route:local|2026-11-22`], Date.parse("2026-11-22T12:00:00Z"))).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });

  it("holds a request with no max_tokens to the output bound its reservation assumed", async () => {
    const { admission } = setup();
    const route = config.routes["priced-local"]!;
    const unbounded = await admission.admit({ requestId: "req_free", caller, routeName: "priced-local", route, request: { ...request(), maxTokens: undefined } });
    // The local model's maximum is unknown: the 4,096 the reservation assumed.
    expect(unbounded.outputBound).toBe(4096);
    const named = await admission.admit({ requestId: "req_named", caller, routeName: "priced-local", route, request: request(64) });
    expect(named.outputBound).toBeUndefined();
  });

  it("a soft budget serves past its limit and says which scope it was", async () => {
    const { admit } = setup();
    expect((await admit("soft")).softExceeded).toEqual([]);
    const over = await admit("soft"); // 2 × 1,045,000 > 1,500,000
    expect(over.softExceeded).toEqual(["route:soft"]);
  });

  it("the per-request cap rejects with the max_tokens that would fit", async () => {
    const { admit } = setup();
    // $0.0005 = 500,000 nano; input 18 × 2500 = 45,000; (500,000 − 45,000) / 10,000 = 45 tokens.
    await expect(admit("capped", 100)).rejects.toMatchObject({ status: 400, param: "max_tokens", message: expect.stringContaining("send max_tokens of at most 45") });
    await admit("capped", 45);
  });

  it("requests per minute: a sliding window with retry-after", async () => {
    const { admit, clock } = setup(Date.parse("2026-11-22T12:00:10Z"));
    for (let i = 0; i < 3; i++) await admit("limited");
    // Not at the next minute (12:01:00), where the 3 still weigh in whole: once they weigh 2 or
    // less, 20 s into it, 3 × (1 − 20/60) = 2, and 2 + 1 ≤ 3. From 12:00:10 that is 70 s.
    await expect(admit("limited")).rejects.toMatchObject({ status: 429, code: "rate_limit_exceeded", retryAfterSeconds: 70 });
    clock.now = Date.parse("2026-11-22T12:01:20Z");
    await admit("limited");
    // Half-way through the next minute the previous minute's 3 count as 1.5, plus the one above: full.
    clock.now = Date.parse("2026-11-22T12:01:30Z");
    await expect(admit("limited")).rejects.toMatchObject({ status: 429 });
  });

  it("tokens per minute count the tokens requests actually used", async () => {
    const { admit } = setup();
    const first = await admit("tokens");
    await first.settle(makeCostRecord({ usage: { inputTokens: 600, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 400, reasoningTokens: 0 } }));
    await expect(admit("tokens")).rejects.toMatchObject({ status: 429, message: expect.stringContaining("1000 tokens per minute") });
  });
});

describe("a route with a target whose provider has no key", () => {
  const at = Date.parse("2026-11-22T12:00:00Z");
  function admitOn(routeName: string, store: AdmissionStore = new MemoryAdmissionStore()) {
    const admission = new Admission({ config, store, prices: new PriceBook(config.providers), now: () => at });
    return admission.admit({ requestId: `req_${routeName}`, caller, routeName, route: config.routes[routeName]!, request: request() });
  }

  it("weighs only the targets the router can call, in the per-request cap and in the reservation", async () => {
    await admitOn("keyless-capped");
    const store = new MemoryAdmissionStore();
    await admitOn("keyless-budgeted", store);
    expect(await store.levels(["route:keyless-budgeted|2026-11-22"], at)).toEqual([{ spentNano: 0, reservedNano: WORST }]);
  });

  it("with none it can call, reserves nothing: the router answers with the key to set", async () => {
    const store = new MemoryAdmissionStore();
    const admitted = vi.spyOn(store, "admit");
    const ticket = await admitOn("all-keyless", store);
    await ticket.settle(undefined);
    expect(admitted).not.toHaveBeenCalled();
  });
});

// After a billed call, the route tries its next target only if the billed calls plus the worst
// case of a target still to be tried fit the per-request cap.
describe("the per-request cap across a fallback", () => {
  const admission = new Admission({ config, store: new MemoryAdmissionStore(), prices: new PriceBook(config.providers) });
  const admit = () => admission.admit({ requestId: `req_${Math.random()}`, caller, routeName: "capped-pair", route: config.routes["capped-pair"]!, request: request() });
  const billedMini = (fallbackFrom: CostRecord["fallbackFrom"]) =>
    makeCostRecord({ model: "gpt-4o-mini", status: "error", cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 100_000, cacheSavingsNano: 0 }, fallbackFrom });

  it("leaves out a target that was tried and refused (not billed): the route does not call it again", async () => {
    const ticket = await admit();
    expect(await ticket.chargeEarlierCall(billedMini([{ provider: "openai", model: "gpt-4o", errorType: "rate_limit" }]))).toBe(true);
  });

  it("leaves out a target the per-target policies refused (a 400): the route never calls it", async () => {
    const ticket = await admit();
    expect(await ticket.chargeEarlierCall(billedMini(undefined), [{ provider: "openai", model: "gpt-4o" }])).toBe(true);
  });

  it("counts a target not tried yet, wherever the route lists it (a \"cheapest\" route may try the last first)", async () => {
    const ticket = await admit();
    // 100,000 billed + gpt-4o's 1,045,000 > 1,100,000.
    expect(await ticket.chargeEarlierCall(billedMini(undefined))).toBe(false);
  });
});

describe("admission when the store is down", () => {
  it("refuses budgeted requests with a 503 instead of spending blindly", async () => {
    const broken = {
      admit: async () => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
      },
      settle: async () => {},
      extend: async () => {},
      levels: async () => [],
    };
    const logs: string[] = [];
    const admission = new Admission({ config, store: broken, prices: new PriceBook(config.providers), log: (line) => logs.push(line) });
    await expect(admission.admit({ requestId: "req_x", caller, routeName: "daily", route: config.routes.daily!, request: request() })).rejects.toMatchObject({
      status: 503,
      code: "budget_store_unavailable",
    });
    expect(logs.join()).toContain("budget store unreachable (connect ECONNREFUSED 127.0.0.1:6379)");
  });
});

describe("Redis admission store: reservations written by an older gateway", () => {
  it("releases amounts stored as JSON numbers, zero included, without failing the script", async () => {
    const prefix = uniquePrefix("old-format");
    const store = new RedisAdmissionStore(redis, prefix);
    const base = `${prefix}{tollgate:budgets}`;
    const scopeKey = "route:daily|2026-11-22";
    await redis.hset(`${base}:scope:${scopeKey}`, "reserved", "500");
    await redis.hset(`${base}:reservations`, "old_1", JSON.stringify({ keys: [`${base}:scope:${scopeKey}`], amount: 500 }), "old_0", JSON.stringify({ keys: [`${base}:scope:${scopeKey}`], amount: 0 }));
    await redis.zadd(`${base}:expiries`, 1, "old_1", 1, "old_0");
    expect(await store.levels([scopeKey], 10)).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });
});

describe("Redis admission store: renewing reservations", () => {
  it("pushes a held reservation's expiry out, never earlier, and does not bring back a settled one", async () => {
    const prefix = uniquePrefix("renew");
    const store = new RedisAdmissionStore(redis, prefix);
    const expiries = `${prefix}{tollgate:budgets}:expiries`;
    const scope = { key: "route:r|2026-11-22", scope: "route:r", limitNano: 10_000_000, mode: "hard" as const, windowEndsAt: 0 };
    const now = Date.parse("2026-11-22T12:00:00Z");
    for (const requestId of ["req_held", "req_done"]) {
      await store.admit({ requestId, now, reservationExpiresAt: now + 120_000, amountNano: 1000, scopes: [scope], rates: [] });
    }
    await store.settle({ requestId: "req_done", now, scopeKeys: [scope.key], actualNano: 500, tokens: 0, rateScopes: [] });

    await store.extend(["req_held", "req_done"], now + 240_000);
    expect(Number(await redis.zscore(expiries, "req_held"))).toBe(now + 240_000);
    expect(await redis.zscore(expiries, "req_done")).toBeNull();
    await store.extend(["req_held"], now + 60_000); // a late, stale renewal
    expect(Number(await redis.zscore(expiries, "req_held"))).toBe(now + 240_000);
  });
});

describe("Redis admission store: settlements issued in one turn", () => {
  it("go to Redis together and each counts exactly once, a repeated one included", async () => {
    const prefix = uniquePrefix("batched");
    const store = new RedisAdmissionStore(redis, prefix);
    const now = Date.parse("2026-11-22T12:00:00Z");
    const scopes = [{ scope: "route:daily", key: "route:daily|2026-11-22", limitNano: 10_000_000, mode: "hard" as const, windowEndsAt: now + 3_600_000 }];
    const rates = [{ scope: "key:app", tpm: 1_000_000 }];
    const ids = Array.from({ length: 150 }, (_, index) => `req_b${index}`);
    for (const requestId of ids) {
      expect(await store.admit({ requestId, now, reservationExpiresAt: now + 600_000, amountNano: 1_000, scopes, rates })).toMatchObject({ admitted: true });
    }
    const commands: string[] = [];
    const monitor = await redis.monitor();
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (/^evalsha$|^eval$/i.test(args[0] ?? "") && args.some((arg) => arg.includes(`${prefix}{tollgate:budgets}:settled:`))) commands.push(args[0]!);
    });
    // 150 settlements in one turn (more than one batch), plus one of them twice.
    const settle = (requestId: string, actualNano: number) => store.settle({ requestId, now, scopeKeys: [scopes[0]!.key], actualNano, tokens: 10, rateScopes: ["key:app"] });
    await Promise.all([...ids.map((requestId, index) => settle(requestId, 100 + index)), settle("req_b7", 100 + 7)]);
    await new Promise((resolve) => setTimeout(resolve, 50)); // MONITOR's lines trail the replies
    monitor.disconnect();
    const spent = ids.reduce((sum, _id, index) => sum + 100 + index, 0);
    expect(await store.levels([scopes[0]!.key], now)).toEqual([{ spentNano: spent, reservedNano: 0 }]);
    expect(await redis.get(`${prefix}{tollgate:budgets}:rate:key:app|tpm|${Math.floor(now / 60_000)}`)).toBe(String(150 * 10));
    expect(commands.length).toBe(3); // 151 settlements: batches of 64, 64 and 23
  });
});

describe("Redis admission store: one bad settlement in a batch", () => {
  it("fails alone: the others in its batch are applied and resolve", async () => {
    const prefix = uniquePrefix("poisoned");
    const store = new RedisAdmissionStore(redis, prefix);
    const key = "route:daily|2026-11-22";
    const windowEndsAt = [Date.parse("2026-11-23T00:00:00Z")];
    const settle = (requestId: string, tokens: number) => store.settle({ requestId, now: 0, scopeKeys: [key], windowEndsAt, actualNano: 1_000, tokens, rateScopes: ["key:app"] });
    const outcomes = await Promise.allSettled([settle("req_p1", 5), settle("req_p2", 12.5), settle("req_p3", 5)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain("settling req_p2 failed: ");
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain("must be whole numbers");
    // Nothing of the bad one was written; a retry with sound figures applies it once.
    expect(await store.levels([key], 0)).toEqual([{ spentNano: 2_000, reservedNano: 0 }]);
    await settle("req_p2", 12);
    await settle("req_p1", 5);
    expect(await store.levels([key], 0)).toEqual([{ spentNano: 3_000, reservedNano: 0 }]);
    expect(await redis.get(`${prefix}{tollgate:budgets}:rate:key:app|tpm|0`)).toBe("22");
  });
});

describe("Redis admission store: a batch that cannot be written", () => {
  it("rejects every settlement in it, for the caller's retry, and throws nothing of its own", async () => {
    const unreachable = new Redis({ port: 1, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    unreachable.on("error", () => undefined);
    const store = new RedisAdmissionStore(unreachable, uniquePrefix("down"));
    const settle = (requestId: string) => store.settle({ requestId, now: 0, scopeKeys: ["route:daily|2026-11-22"], actualNano: 1, tokens: 1, rateScopes: [] });
    const outcomes = await Promise.allSettled([settle("req_d1"), settle("req_d2")]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    unreachable.disconnect();
  });
});
