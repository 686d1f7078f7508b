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
// the project's default, which its settings may make "priority", billed above the standard rates
// the cost is computed at. The answer says which tier served it; the record warns.
describe("an answer served at a tier other than the default", () => {
  it("is recorded with a warning naming the tier, and an answer at the default tier with none", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority" });
    const priority = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    expect(priority.data.service_tier).toBe("priority");
    const record = await waitForRecord(rig.gateway, priority.response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings.join("\n")).toContain('served this call at its "priority" tier, billed at other rates than the standard ones this cost is computed at');
    const standard = await rig.gateway.openai.chat.completions.create(ask).withResponse();
    expect((await waitForRecord(rig.gateway, standard.response.headers.get("x-tollgate-request-id")!)).warnings.join("\n")).not.toContain("tier");
  });

  it("streamed, the same", async () => {
    rig.mocks.openai.enqueue({ kind: "text", serviceTier: "priority" });
    const { data: stream, response } = await rig.gateway.openai.chat.completions.create({ ...ask, stream: true }).withResponse();
    for await (const _chunk of stream) {
      // read to the end: the record is written once the stream is
    }
    expect((await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!)).warnings.join("\n")).toContain('"priority" tier');
  });
});
