// A tpm-limited route without a budget: the admission's tpm count is held (and renewed) like a
// reservation while its request runs, so a request longer than the reservation TTL still has its
// count corrected to the tokens it used when it settles.
// Used to be wrong: only budget scopes were held; the entry was swept at the TTL and the settle
// then added the tokens used on top of the admission's bound, refusing later requests (Redis).
import { describe, expect, it } from "vitest";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";

const config = budgetedConfig({ tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 1000 } } }, { reservationTtlSeconds: 1 });
// 18 input tokens at most + max_tokens 100: each admission counts 118 tokens until its settle.
const request = hiRequest("tokens", { stream: true, maxTokens: 100 });
const used = makeCostRecord({ usage: { inputTokens: 5, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 5, reasoningTokens: 0 } });
const rig = useRedis("tpm-hold");

describe.each([
  { name: "memory", store: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", store: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}:`) },
])("tpm-only route, requests longer than the reservation TTL ($name store)", ({ store }) => {
  it("a request that ran past the reservation TTL counts the 10 tokens it used, not its 118-token bound plus them", async () => {
    const { admit } = admissionFor(config, { store: store() });
    // Eight streams, each running 2.5 s (past the 1 s TTL, renewed meanwhile) and using 10 tokens.
    const tickets = [];
    for (let i = 0; i < 8; i++) tickets.push(await admit(request, `req_${Date.now()}_${i}`));
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (const ticket of tickets) await ticket.settle(used);
    // 80 of 1000 tokens used this minute (or the last): the next request fits.
    await expect(admit(request, `req_${Date.now()}_next`)).resolves.toMatchObject({ softExceeded: [] });
  }, 20_000);
});
