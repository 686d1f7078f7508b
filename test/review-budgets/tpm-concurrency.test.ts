import { describe, expect, it } from "vitest";
import { Admission } from "../../src/budgets/admission.ts";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";
import { RedisAdmissionStore } from "../../src/budgets/redis-admission-store.ts";
import type { AdmissionStore } from "../../src/budgets/admission-store.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { PriceBook } from "../../src/metering/price-book.ts";
import { makeCostRecord } from "../support/cost-records.ts";
import { useRedis } from "../support/use-redis.ts";

// Tokens-per-minute reserve nothing at admission: the check is only "tokens already settled this
// minute < tpm". Requests admitted concurrently (or while earlier ones are still running) are
// all let through, so a tpm of 1,000 admits 20 requests that use 10,000 tokens in one minute.
// rpm holds under concurrency; tpm does not.

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
});
