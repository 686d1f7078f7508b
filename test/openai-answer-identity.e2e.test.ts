import { describe, expect, it } from "vitest";
import { useMockedGateway, waitForRecord } from "./support/gateway.ts";

// OpenAI's answers say which backend answered: `system_fingerprint` (the SDK's `seed` docs: watch
// it to know when determinism may change) and `service_tier` (the tier that served the request).
// The stand-in sends both as OpenAI does (`fp_` and 10 hex digits, "default"), on the answer and
// on every chunk. Was: tollgate's answer had neither.

const rig = useMockedGateway();
const ask = { model: "gpt", messages: [{ role: "user" as const, content: "hi" }], seed: 7 };

describe("system_fingerprint and service_tier", () => {
  it("reach an OpenAI client's answer as OpenAI sent them", async () => {
    const completion = await rig.gateway.openai.chat.completions.create(ask);
    expect(completion.system_fingerprint).toMatch(/^fp_[0-9a-f]{10}$/);
    expect(completion.service_tier).toBe("default");
  });

  it("are on every chunk of a stream, the usage chunk included, the same on each", async () => {
    const stream = await rig.gateway.openai.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    const seen = new Set<string>();
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      seen.add(`${chunk.service_tier} ${chunk.system_fingerprint}`);
    }
    expect(chunks).toBeGreaterThan(2);
    expect([...seen]).toHaveLength(1);
    expect([...seen][0]).toMatch(/^default fp_[0-9a-f]{10}$/);
  });

  it("are not invented for a Claude answer", async () => {
    const completion = await rig.gateway.openai.chat.completions.create({ ...ask, model: "claude" });
    expect(completion).not.toHaveProperty("system_fingerprint");
    expect(completion).not.toHaveProperty("service_tier");
  });
});

// A request tollgate sends names no tier (flex and priority are refused), so OpenAI serves it at
// the project's default, which its settings may make "priority": every token billed at a premium
// (openai.com/api-priority-processing: gpt-4o $4.25 / $2.125 cached / $17 per 1M, against $2.50 /
// $1.25 / $10 at the default tier). The answer says which tier served it; the record is priced at
// that tier's rates, or warns where tollgate has none. Was: priced at the standard rates, with a
// warning only (41% below the invoice for gpt-4o).
const usage = { prompt_tokens: 3000, cached_tokens: 1000, completion_tokens: 400 };
// $4.25 per 1M is 4,250 nano-dollars per token: 2,000 uncached × 4,250 + 1,000 cached × 2,125 +
// 400 output × 17,000.
const AT_PRIORITY = { inputNano: 8_500_000, cacheReadNano: 2_125_000, outputNano: 6_800_000, totalNano: 17_425_000 };
// The same usage at the default tier: 2,000 × 2,500 + 1,000 × 1,250 + 400 × 10,000.
const AT_DEFAULT = { inputNano: 5_000_000, cacheReadNano: 1_250_000, outputNano: 4_000_000, totalNano: 10_250_000 };

describe("an answer served at the priority tier", () => {
  it("is priced at the priority rates, says so, and has no warning; one at the default tier at the standard rates", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority", usage });
    const priority = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    expect(priority.data.service_tier).toBe("priority");
    const record = await waitForRecord(rig.gateway, priority.response.headers.get("x-tollgate-request-id")!);
    expect(record.cost).toMatchObject(AT_PRIORITY);
    expect(record.cost.cacheSavingsNano).toBe(4_250_000 - 2_125_000); // the cached 1,000 at the priority input rate, less what they cost
    expect(record.serviceTier).toBe("priority");
    expect(record.warnings).toEqual([]);
    expect(priority.response.headers.get("x-tollgate-cost-usd")).toBe("0.017425");

    rig.mocks.openai.enqueue({ kind: "text", usage });
    const standard = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    const standardRecord = await waitForRecord(rig.gateway, standard.response.headers.get("x-tollgate-request-id")!);
    expect(standardRecord.cost).toMatchObject(AT_DEFAULT);
    expect(standardRecord).not.toHaveProperty("serviceTier");
    expect(standardRecord.warnings).toEqual([]);
  });

  it("streamed, the same", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority", usage });
    const { data: stream, response } = await rig.gateway.openai.chat.completions.create({ ...ask, stream: true }).withResponse();
    for await (const _chunk of stream) {
      // read to the end: the record is written once the stream is
    }
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.cost).toMatchObject(AT_PRIORITY);
    expect(record.serviceTier).toBe("priority");
  });

  it("at a tier tollgate has no price for, is priced at the standard rates with a warning naming the tier", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "scale", usage });
    const scale = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    const record = await waitForRecord(rig.gateway, scale.response.headers.get("x-tollgate-request-id")!);
    expect(record.cost).toMatchObject(AT_DEFAULT);
    expect(record.serviceTier).toBe("scale");
    expect(record.warnings.join("\n")).toContain('served this call at its "scale" tier, billed at other rates than the standard ones this cost is computed at');
  });
});
