import { describe, expect, it } from "vitest";
import { admissionFor, budgetedConfig, hiRequest } from "../../test/support/admission-rig.ts";

// gpt-4o, "hi", max_tokens 100: a worst case of 18 input tokens × 2,500 + 100 × 10,000 =
// 1,045,000 nano-dollars, over a total budget of 1,000,000.

const config = budgetedConfig({ lifetime: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.001, window: "total" } } });

describe("the 402 of a total budget", () => {
  it('says "in total", not "per total"', async () => {
    const { admit } = admissionFor(config);
    await expect(admit(hiRequest("lifetime", { maxTokens: 100 }))).rejects.toThrow(
      "budget exceeded for route:lifetime: limit $0.001 in total, spent $0; this request could cost up to $0.001045; a total budget does not reset",
    );
  });
});
