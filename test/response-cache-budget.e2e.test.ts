import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// `x-tollgate-budget-remaining-usd` is on every non-streamed answer of a budgeted route, a
// response-cache hit included: it costs nothing, so it leaves what the miss before it left.
// The hit used to come without the header (answer-from-cache.ts built its own headers).

const rig = useMockedGateway({
  cached: {
    targets: [{ provider: "openai", model: "gpt-4o" }],
    budget: { usd: 5, window: "day" },
    policies: { responseCache: { ttlSeconds: 60 } },
  },
});

describe("x-tollgate-budget-remaining-usd on a response-cache hit", () => {
  it("says what the miss before it left", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "General Kenobi.", usage: { prompt_tokens: 12, completion_tokens: 4 } });
    const body = { model: "cached", temperature: 0, max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] };
    const miss = await postJson(rig.gateway, "/v1/chat/completions", body);
    await miss.text();
    expect(miss.headers.get("x-tollgate-cache")).toBe("miss");
    // 12 × $2.50 / 1M + 4 × $10 / 1M = 70,000 nano: $5 − $0.00007.
    expect(miss.headers.get("x-tollgate-budget-remaining-usd")).toBe("4.99993");

    // The answer is kept (and the miss settled) after its response: give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const hit = await postJson(rig.gateway, "/v1/chat/completions", body);
    await hit.text();
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    expect(hit.headers.get("x-tollgate-budget-remaining-usd")).toBe("4.99993");
  });
});
