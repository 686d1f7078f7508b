import { afterEach, describe, expect, it, vi } from "vitest";
import { makeCostRecord } from "../../test/support/cost-records.ts";
import { Admission } from "./admission.ts";
import type { AdmissionStore, SettlePlan } from "./admission-store.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";

// Admission.settle used to retry a failed settle 8 times (100 ms doubling, ~25 s) and then give
// up: the request's actual cost never reached the budget. Its reservation expires on its own, so
// a budget store away for ~30 s (a Redis failover) lost the spend of every request that finished
// meanwhile, and later requests spent it again. It now retries until the store is back.

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 1, window: "total" } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
  },
  { K: "sk" },
);

afterEach(() => {
  vi.useRealTimers();
});

describe("settling through a budget store outage", () => {
  it("the actual cost reaches the budget once the store is back", async () => {
    vi.useFakeTimers();
    const start = Date.now();
    const memory = new MemoryAdmissionStore();
    const outageMs = 40_000;
    const store: AdmissionStore = {
      admit: (plan) => memory.admit(plan),
      extend: (ids, at) => memory.extend(ids, at),
      levels: (keys, now) => memory.levels(keys, now),
      settle: async (plan: SettlePlan) => {
        if (Date.now() - start < outageMs) throw new Error("connect ECONNREFUSED");
        return memory.settle(plan);
      },
    };
    const admission = new Admission({ config, store, prices: new PriceBook(config.providers), log: () => {} });
    const ticket = await admission.admit({
      requestId: "req_outage",
      caller: { kind: "key", key: config.keys[0]! },
      routeName: "gpt",
      route: config.routes.gpt!,
      request: { route: "gpt", stream: false, streamUsage: false, maxTokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
    });
    const settled = ticket.settle(makeCostRecord({ cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 70_000, totalNano: 70_000, cacheSavingsNano: 0 } })).catch((error: Error) => error);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    await settled;
    expect(await memory.levels(["route:gpt|total"], Date.now())).toEqual([{ spentNano: 70_000, reservedNano: 0 }]);
  });
});
