import { describe, expect, it } from "vitest";
import { configSchema } from "./config-schema.ts";

// The config shapes the issues and the brief publish as contract, parsed exactly as written there.

describe("contract config examples", () => {
  it("the policies example (issue 4) is valid as written", () => {
    const result = configSchema.safeParse({
      providers: { anthropic: { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" } } },
      routes: {
        support: {
          targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }],
          policies: {
            maxTokens: { default: 512, cap: 1024, onExceed: "clamp" },
            stop: { sequences: ["\n\nUser:"] },
            format: { type: "json", prefill: false },
            brevity: { maxSentences: 3 },
            sampling: { temperature: { default: 0.7, min: 0, max: 1 }, onUnsupported: "drop" },
            promptCache: { mode: "auto", ttl: "5m", minRepeats: 2 },
            responseCache: { ttlSeconds: 3600 },
          },
        },
      },
    });
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it("the budget, per-request cap and rate-limit shapes (issue 5) are valid as written", () => {
    const budget = { usd: 50, window: "day", mode: "hard" };
    const result = configSchema.safeParse({
      providers: { openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" } } },
      routes: { support: { targets: [{ provider: "openai", model: "gpt-4o" }], budget, maxCostPerRequestUsd: 0.05, rateLimit: { rpm: 600, tpm: 100000 } } },
      keys: [{ id: "search-app", team: "search", hash: `sha256:${"0".repeat(64)}`, budget, rateLimit: { rpm: 600, tpm: 100000 } }],
      teams: { search: { budget } },
    });
    expect(result.error?.issues ?? []).toEqual([]);
  });
});
