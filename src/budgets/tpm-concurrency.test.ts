import { describe, expect, it } from "vitest";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// Tokens-per-minute used to reserve nothing at admission: the check was only "tokens already
// settled this minute < tpm", so requests admitted concurrently were all let through (a tpm of
// 1,000 admitted 20 requests that used 10,000 tokens in one minute). Admission now counts each
// request's token bound at once, and the settle replaces it with the tokens used.

const rig = useRedis("review-tpm");
const config = budgetedConfig({ tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 1000 } } });

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("tpm under concurrency on the $name store", ({ make }) => {
  it("does not let a minute's tokens run far past the limit", async () => {
    const now = Date.parse("2026-11-22T12:00:10Z");
    const { admit } = admissionFor(config, { store: make(), now: () => now });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => admit(hiRequest("tokens", { maxTokens: 480 }))));
    const tickets = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    // Each admitted request uses 20 input + 480 output tokens, well within what it asked for.
    await Promise.all(tickets.map((ticket) => ticket.settle(makeCostRecord({ usage: { inputTokens: 20, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 480, reasoningTokens: 0 } }))));
    const tokensServed = tickets.length * 500;
    // One request past the limit is the most a tokens-as-used check can let through.
    expect(tokensServed).toBeLessThanOrEqual(1000 + 500);
  });

  it("counts the tokens used once the request settles, not its bound", async () => {
    const now = Date.parse("2026-11-22T12:00:10Z");
    const { admit } = admissionFor(config, { store: make(), now: () => now });
    // A bound of 18 + 4000 tokens is over the limit while the request runs: the next is refused.
    const big = await admit(hiRequest("tokens", { maxTokens: 4000 }));
    await expect(admit(hiRequest("tokens", { maxTokens: 10 }))).rejects.toMatchObject({ status: 429, message: expect.stringContaining("1000 tokens per minute") });
    // It used 100: once settled, that is what the minute holds, and the next request fits.
    await big.settle(makeCostRecord({ usage: { inputTokens: 20, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 80, reasoningTokens: 0 } }));
    await admit(hiRequest("tokens", { maxTokens: 10 }));
  });
});
