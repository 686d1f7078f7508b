import { describe, expect, it } from "vitest";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";

// "Idempotent by request id: a retried settle never counts twice." The embedded store (and the
// Workers' Durable Object, which runs it) used to clear its whole set of settled ids once it
// passed 100,000, including the id it had just settled: a retry of that settle (a lost Durable
// Object reply, retried by Admission.settle) then counted again.

describe("MemoryAdmissionStore settle idempotency", () => {
  it("a retried settle does not count twice, however many requests were settled before", async () => {
    const store = new MemoryAdmissionStore();
    const now = Date.parse("2026-11-22T12:00:00Z");
    const key = "route:chat|total";
    const settle = (requestId: string, actualNano: number) => store.settle({ requestId, now, scopeKeys: [key], actualNano, tokens: 0, rateScopes: [] });
    for (let i = 0; i < 100_000; i++) await settle(`req_${i}`, 0);
    await settle("req_last", 1_000);
    await settle("req_last", 1_000); // the retry after a lost reply
    expect((await store.levels([key], now))[0]!.spentNano).toBe(1_000);
  });
});
