import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { admissionFor, hiRequest } from "../../test/support/admission-rig.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "../../test/support/redis-server.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import type { AdmissionStore } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { RedisAdmissionStore } from "./redis-admission-store.ts";

// Two hard scopes are spent, the route's day and the team's month. The 402 named the first in
// order, the route, and "resets at" tomorrow: a retry then met the team's 402, until the month's
// end. It names the scope that frees last now, the first moment a retry can pass.

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { support: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.001, window: "day" } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
    teams: { search: { budget: { usd: 0.001, window: "month" } } },
  },
  { K: "sk" },
);

let redis: RedisHandle;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

describe.each([
  { name: "memory", store: (): AdmissionStore => new MemoryAdmissionStore() },
  { name: "Redis", store: (): AdmissionStore => new RedisAdmissionStore(client, uniquePrefix("blocking")) },
])("a 402 with two spent hard scopes, on the $name store", ({ store }) => {
  it("names the one that frees last, and a retry once it has reset passes", async () => {
    let now = Date.parse("2026-11-10T12:00:00Z");
    const { admit } = admissionFor(config, { store: store(), now: () => now });
    const request = hiRequest("support", { maxTokens: 10 });
    // One request spends both budgets whole ($0.001 each).
    const ticket = await admit(request);
    await ticket.settle(makeCostRecord({ cost: { inputNano: 1_000_000, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 1_000_000, cacheSavingsNano: 0 } }));
    const refused = await admit(request).then(() => undefined, (error: Error) => error);
    // As GET /v1/budgets writes it: "2026-12-01T00:00:00Z".
    expect(refused?.message).toMatch(/^budget exceeded for team:search: .*resets at 2026-12-01T00:00:00Z$/);
    now = Date.parse("2026-12-01T00:00:01Z");
    await expect(admit(request)).resolves.toBeDefined();
  });
});
