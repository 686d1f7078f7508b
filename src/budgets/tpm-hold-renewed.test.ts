// A tpm-limited route without a budget: the admission's tpm count is held (and renewed) like a
// reservation while its request runs, so a request longer than the reservation TTL still has its
// count corrected to the tokens it used when it settles.
// Used to be wrong: only budget scopes were held; the entry was swept at the TTL and the settle
// then added the tokens used on top of the admission's bound, refusing later requests (Redis).
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "../../test/support/redis-server.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";
import { Admission } from "./admission.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import type { ChatRequest } from "../model/chat-request.ts";

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 1000 } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
    server: { maxBodyBytes: 4 * 1024 * 1024, streamKeepAliveSeconds: 15, streamSendTimeoutSeconds: 60, reservationTtlSeconds: 1 },
  },
  { K: "sk" },
);
const caller = { kind: "key" as const, key: config.keys[0]! };
// 18 input tokens at most + max_tokens 100: each admission counts 118 tokens until its settle.
const request: ChatRequest = { route: "tokens", stream: true, streamUsage: false, maxTokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
const used = makeCostRecord({ usage: { inputTokens: 5, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 5, reasoningTokens: 0 } });

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
  { name: "Redis", store: (): AdmissionStore => new RedisAdmissionStore(redis, uniquePrefix("review-tpm-ttl")) },
])("tpm-only route, requests longer than the reservation TTL ($name store)", ({ store: makeStore }) => {
  it("a request that ran past the reservation TTL counts the 10 tokens it used, not its 118-token bound plus them", async () => {
    const admission = new Admission({ config, store: makeStore(), prices: new PriceBook(config.providers) });
    let id = 0;
    const admit = () => admission.admit({ requestId: `req_${Date.now()}_${++id}`, caller, routeName: "tokens", route: config.routes.tokens!, request });
    // Eight streams, each running 2.5 s (past the 1 s TTL, renewed meanwhile) and using 10 tokens.
    const tickets = [];
    for (let i = 0; i < 8; i++) tickets.push(await admit());
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (const ticket of tickets) await ticket.settle(used);
    // 80 of 1000 tokens used this minute (or the last): the next request fits.
    await expect(admit()).resolves.toMatchObject({ softExceeded: [] });
  }, 20_000);
});
