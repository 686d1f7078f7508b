import type { CostRecord } from "../../src/metering/cost-record.ts";

/** A complete record with every field set; override what a test is about. */
export function makeCostRecord(overrides: Partial<CostRecord> = {}): CostRecord {
  return {
    requestId: `req_${Math.random().toString(16).slice(2)}`,
    time: "2026-11-22T10:00:00.000Z",
    keyId: "app",
    team: "search",
    route: "gpt",
    provider: "openai",
    model: "gpt-4o",
    dialect: "openai",
    stream: false,
    status: "ok",
    httpStatus: 200,
    finishReason: "stop",
    usage: { inputTokens: 176, cacheReadTokens: 1024, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 42, reasoningTokens: 0 },
    cost: { inputNano: 440_000, cacheReadNano: 1_280_000, cacheWriteNano: 0, outputNano: 420_000, totalNano: 2_140_000, cacheSavingsNano: 1_280_000 },
    ttftMs: 120.5,
    upstreamTtftMs: 118.2,
    durationMs: 240.1,
    outputTokensPerSecond: null,
    estimated: false,
    unpriced: false,
    policies: [],
    warnings: [],
    ...overrides,
  };
}
