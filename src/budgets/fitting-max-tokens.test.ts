import { describe, expect, it } from "vitest";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";

// maxCostPerRequestUsd "answers 400 with the largest max_tokens that would fit" (docs/budgets.md).
// A target whose model maximum fits under the cap whatever max_tokens is sent does not limit it:
// its output bound is clamped to that maximum.
//
// Route: gpt-4o-2024-05-13 ($5 / $15 per 1M, max output 4,096) then gpt-4.1 ($2 / $8, 32,768).
// Cap $0.10 = 100,000,000 nano. Prompt "hi": input bound 18.
//   4o-05-13 at its maximum: 18 x 5,000 + 4,096 x 15,000 = 61,530,000  (fits whatever max_tokens)
//   gpt-4.1: 18 x 2,000 + n x 8,000 <= 100,000,000  =>  n <= 12,495 (99,996,000; 12,496 -> 100,004,000)
// The largest that fits is 12,495. Was: 6,660, the 4o-05-13 bound it never reaches.

const { admit } = admissionFor(
  budgetedConfig({ capped: { targets: [{ provider: "openai", model: "gpt-4o-2024-05-13" }, { provider: "openai", model: "gpt-4.1" }], maxCostPerRequestUsd: 0.1 } }),
);

describe("maxCostPerRequestUsd on a route whose targets have different maximum outputs", () => {
  it("names the largest max_tokens that fits, and that one is admitted", async () => {
    await expect(admit(hiRequest("capped", { maxTokens: 32_768 }))).rejects.toMatchObject({ status: 400, message: expect.stringContaining("send max_tokens of at most 12495") });
    await expect(admit(hiRequest("capped", { maxTokens: 12_495 }))).resolves.toBeDefined();
    await expect(admit(hiRequest("capped", { maxTokens: 12_496 }))).rejects.toMatchObject({ status: 400 });
  });
});

describe("maxCostPerRequestUsd on a request that names no max_tokens", () => {
  // claude-sonnet-4-6 ($3 / $15, reserved at 1.1×, $3.30 / $16.50: the workspace's default may
  // keep inference in the US, src/pricing/inference-geo.ts) then gpt-4o ($2.50 / $10), cap $0.10,
  // no max_tokens: Claude's bound is the adapter's default of 4,096 (it fits), gpt-4o's is its
  // maximum, 16,384 (it does not). A default bound rises with max_tokens, so Claude limits it too:
  //   claude: (100,000,000 − 18 × 3,300) / 16,500 = 6,057.0 → 6,057
  //   gpt-4o: (100,000,000 − 18 × 2,500) / 10,000 = 9,995.5  → 9,995
  // Was: 9,995, which the next request then sent and was refused for.
  const { admit: ask } = admissionFor(
    budgetedConfig({ capped: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: 0.1 } }),
  );

  it("names the max_tokens that fits on every target, and that one is admitted", async () => {
    await expect(ask(hiRequest("capped"))).rejects.toMatchObject({ status: 400, message: expect.stringContaining("send max_tokens of at most 6057") });
    await expect(ask(hiRequest("capped", { maxTokens: 6_057 }))).resolves.toBeDefined();
    await expect(ask(hiRequest("capped", { maxTokens: 6_058 }))).rejects.toMatchObject({ status: 400 });
  });
});

describe("maxCostPerRequestUsd on a request with Claude's extended thinking", () => {
  // Claude thinks within max_tokens: budget_tokens must stay below it. Was: "send max_tokens of at
  // most 6057" to a request thinking with 16,000, whose resend was refused in turn ("budget_tokens
  // 16000 must be below max_tokens 6057: lower budget_tokens or raise max_tokens").
  // claude-sonnet-4-6 at 1.1×, cap $0.10: (100,000,000 − 18 × 3,300) / 16,500 → 6,057; cap
  // $0.015: (15,000,000 − 59,400) / 16,500 → 905, below thinking's least budget of 1,024.
  const routes = {
    capped: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], maxCostPerRequestUsd: 0.1 },
    tight: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], maxCostPerRequestUsd: 0.015 },
  };
  const { admit: ask } = admissionFor(budgetedConfig(routes));
  const thinking = (budget_tokens: number) => ({ type: "enabled", budget_tokens });

  it("says to lower budget_tokens below the max_tokens it names", async () => {
    await expect(ask(hiRequest("capped", { maxTokens: 32_000, thinking: thinking(16_000) }))).rejects.toMatchObject({
      message: expect.stringContaining("send max_tokens of at most 6057, with thinking.budget_tokens below it"),
    });
    await expect(ask(hiRequest("capped", { maxTokens: 6_057, thinking: thinking(6_056) }))).resolves.toBeDefined();
  });

  it("says to leave thinking out where no budget fits below that max_tokens", async () => {
    await expect(ask(hiRequest("tight", { maxTokens: 32_000, thinking: thinking(16_000) }))).rejects.toMatchObject({
      message: expect.stringContaining("send max_tokens of at most 905, without thinking (its least budget_tokens, 1024, must be below max_tokens)"),
    });
  });

  it("a budget already below the max_tokens that fits needs no word", async () => {
    await expect(ask(hiRequest("capped", { maxTokens: 32_000, thinking: thinking(2_000) }))).rejects.toMatchObject({
      message: expect.stringMatching(/send max_tokens of at most 6057$/),
    });
  });
});
