import { describe, expect, it } from "vitest";
import { useMockedGateway, waitForRecord } from "./support/gateway.ts";

// An OpenAI project whose settings default to the priority tier serves every call that names no
// tier at priority prices (gpt-4o: $4.25 / $17 per 1M against $2.50 / $10). With no
// `serviceTier` in the config, tollgate cannot know this before the first answer says so; from
// then on, budgets and the per-request cap reserve that provider's calls at the priority price.
// Was: the standard price for as long as the process ran, so every reservation fell 41% short.

const CAP_USD = 0.012;
const rig = useMockedGateway({ capped: { targets: [{ provider: "openai", model: "gpt-4o" }], maxCostPerRequestUsd: CAP_USD } });
const hi = [{ role: "user" as const, content: "hi" }];

describe("an OpenAI project that serves at priority unasked", () => {
  it("is reserved at priority prices once an answer said so", async () => {
    // At the standard $10 per 1M output, 1,000 tokens' worst case is about $0.010: under the cap.
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority", usage: { prompt_tokens: 10, completion_tokens: 100 } });
    const { response } = await rig.gateway.openai.chat.completions.create({ model: "capped", messages: hi, max_tokens: 1_000 }).withResponse();
    expect(rig.mocks.openai.requests.at(-1)!.body.service_tier).toBeUndefined();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.cost.totalNano).toBe(10 * 4_250 + 100 * 17_000);

    // The same request again: at $17 per 1M its worst case is over the cap.
    const calls = rig.mocks.openai.requests.length;
    const refused = await rig.gateway.openai.chat.completions.create({ model: "capped", messages: hi, max_tokens: 1_000 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, code: "max_cost_per_request_exceeded" });
    expect(rig.mocks.openai.requests.length).toBe(calls);
  });
});
