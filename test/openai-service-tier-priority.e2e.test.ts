import { describe, expect, it } from "vitest";
import { useMockedGateway, waitForRecord } from "./support/gateway.ts";

// `providers.<name>.serviceTier: "priority"` puts every call of that provider on OpenAI's faster
// tier, billed at a premium (gpt-4o: $4.25 / $2.125 cached / $17 per 1M, against $2.50 / $1.25 /
// $10; openai.com/api-priority-processing). Its calls are recorded at those prices, and budgets
// and the per-request cap reserve them: priced at the standard rates, a budget could be
// overspent by 70% of every request.

const CAP_USD = 0.012;
const rig = useMockedGateway({ capped: { targets: [{ provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: CAP_USD } }, [], { openai: { serviceTier: "priority" } });
const hi = [{ role: "user" as const, content: "hi" }];

describe('a provider pinned to serviceTier "priority"', () => {
  it("asks OpenAI for the priority tier, and records the answer at its prices", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority", usage: { prompt_tokens: 1_000, completion_tokens: 100 } });
    const { data, response } = await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: hi, service_tier: "auto" }).withResponse();
    expect(rig.mocks.openai.requests.at(-1)!.body.service_tier).toBe("priority");
    expect(data.service_tier).toBe("priority");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    // 1,000 × 4,250 + 100 × 17,000 nano-dollars.
    expect(record.cost.totalNano).toBe(4_250_000 + 1_700_000);
    expect(record.warnings).toEqual([]);
  });

  it("holds the per-request cap at the priority price: 1,000 output tokens at $17 per 1M is over $0.012, and the 400 names what fits", async () => {
    // At the standard $10 per 1M the same request's worst case is about $0.010 and would pass.
    const refused = await rig.gateway.openai.chat.completions.create({ model: "capped", messages: hi, max_tokens: 1_000 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, code: "max_cost_per_request_exceeded" });
    const message = (refused as Error).message;
    const fitting = Number(/max_tokens of at most (\d+)/.exec(message)?.[1]);
    // What the cap leaves for output at $17 per 1M after the input bound: below 12,000 / 17 = 705.
    expect(fitting).toBeGreaterThan(600);
    expect(fitting).toBeLessThan(706);
    expect(rig.mocks.openai.requests.filter((request) => request.body.max_tokens === 1_000 || request.body.max_completion_tokens === 1_000)).toHaveLength(0);
    await expect(rig.gateway.openai.chat.completions.create({ model: "capped", messages: hi, max_tokens: fitting })).resolves.toMatchObject({ object: "chat.completion" });
  });
});
