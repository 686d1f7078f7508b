import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { PriceBook } from "../metering/price-book.ts";
import { Admission } from "./admission.ts";
import { MemoryAdmissionStore } from "./memory-admission-store.ts";

// gpt-4o, "hi", max_tokens 100: a worst case of 18 input bytes × 2,500 + 100 × 10,000 =
// 1,045,000 nano-dollars, over a total budget of 1,000,000.

const config = resolveConfig(
  {
    providers: { openai: { type: "openai", apiKey: { env: "K" } } },
    routes: { lifetime: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 0.001, window: "total" } } },
    keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }],
  },
  { K: "sk" },
);

describe("the 402 of a total budget", () => {
  it('says "in total", not "per total"', async () => {
    const admission = new Admission({ config, store: new MemoryAdmissionStore(), prices: new PriceBook(config.providers) });
    const request = { route: "lifetime", stream: false, streamUsage: false, maxTokens: 100, messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }] };
    const refusal = admission.admit({ requestId: "req_1", caller: { kind: "key", key: config.keys[0]! }, routeName: "lifetime", route: config.routes.lifetime!, request });
    await expect(refusal).rejects.toThrow(
      "budget exceeded for route:lifetime: limit $0.001 in total, spent $0; this request could cost up to $0.001045; a total budget does not reset",
    );
  });
});
