import { describe, expect, it } from "vitest";
import { Admission } from "./admission.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// Tokens-per-minute used to reserve nothing at admission: the check was only "tokens already
// settled this minute < tpm", so requests admitted concurrently were all let through (a tpm of
// 1,000 admitted 20 requests that used 10,000 tokens in one minute). Admission now counts each
// request's token bound at once, and the settle replaces it with the tokens used.

const rig = useRedis("review-tpm");
const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 1000 } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
  },
  { K: "sk" },
);

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("tpm under concurrency on the $name store", ({ make }) => {
  it("does not let a minute's tokens run far past the limit", async () => {
    const now = Date.parse("2026-11-22T12:00:10Z");
    const admission = new Admission({ config, store: make(), prices: new PriceBook(config.providers), now: () => now });
    const request = { route: "tokens", stream: false, streamUsage: false, maxTokens: 480, messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }] };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => admission.admit({ requestId: `req_t${i}`, caller: { kind: "key", key: config.keys[0]! }, routeName: "tokens", route: config.routes.tokens!, request })),
    );
    const tickets = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    // Each admitted request uses 20 input + 480 output tokens, well within what it asked for.
    await Promise.all(tickets.map((ticket) => ticket.settle(makeCostRecord({ usage: { inputTokens: 20, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 480, reasoningTokens: 0 } }))));
    const tokensServed = tickets.length * 500;
    // One request past the limit is the most a tokens-as-used check can let through.
    expect(tokensServed).toBeLessThanOrEqual(1000 + 500);
  });

  it("counts the tokens used once the request settles, not its bound", async () => {
    const now = Date.parse("2026-11-22T12:00:10Z");
    const admission = new Admission({ config, store: make(), prices: new PriceBook(config.providers), now: () => now });
    const admit = (id: string, maxTokens: number) =>
      admission.admit({
        requestId: id,
        caller: { kind: "key", key: config.keys[0]! },
        routeName: "tokens",
        route: config.routes.tokens!,
        request: { route: "tokens", stream: false, streamUsage: false, maxTokens, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      });
    // A bound of 18 + 4000 tokens is over the limit while the request runs: the next is refused.
    const big = await admit("req_big", 4000);
    await expect(admit("req_while", 10)).rejects.toMatchObject({ status: 429, message: expect.stringContaining("1000 tokens per minute") });
    // It used 100: once settled, that is what the minute holds, and the next request fits.
    await big.settle(makeCostRecord({ usage: { inputTokens: 20, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 80, reasoningTokens: 0 } }));
    await admit("req_after", 10);
  });
});
