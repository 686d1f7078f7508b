import { describe, expect, it } from "vitest";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// A settle replaces the admission's token bound in the minute it was admitted while that minute
// still counts (it is this one or the one before), and otherwise counts the tokens in this one.
// Was: "still counts" was tested as "its counter still exists" (Redis keeps a minute's counter
// 3 minutes; the memory store prunes old minutes only after writing to them), so a request settled
// two minutes after its admission put its tokens in a minute no estimate reads: they counted nowhere.
//
// tpm 500. Admitted at 12:00:10 with a bound of 18 + 982 = 1,000 tokens. Settled at 12:02:30
// with 600 tokens used (100 in, 500 out). At 12:02:30 the window is minute 12:01 (0 tokens,
// weight 0.5) + minute 12:02: the 600 tokens must count there (600 >= 500: refused). Observed:
// the next request is admitted.

const rig = useRedis("tpm-late-settle");
const config = budgetedConfig({ tokens: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { tpm: 500 } } });

describe.each([
  { name: "memory", make: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", make: (): AdmissionStore => new RedisAdmissionStore(rig.redis, `${rig.prefix}${Math.random()}`) },
])("tpm of a request settled two minutes after admission ($name store)", ({ make }) => {
  it("counts its tokens in the minute it settles", async () => {
    const clock = { now: Date.parse("2026-11-22T12:00:10Z") };
    const { admit } = admissionFor(config, { store: make(), now: () => clock.now });
    const long = await admit(hiRequest("tokens", { stream: true, maxTokens: 982 }));
    clock.now = Date.parse("2026-11-22T12:02:30Z");
    await long.settle(makeCostRecord({ usage: { inputTokens: 100, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 500, reasoningTokens: 0 } }));
    await expect(admit(hiRequest("tokens", { stream: true, maxTokens: 10 }))).rejects.toMatchObject({ status: 429 });
  });
});
