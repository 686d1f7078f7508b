import { describe, expect, it } from "vitest";
import { ledgerRecords, postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// The record's policy notes and warnings are those of the call that answered: a fallback replaces
// the failed target's. Was: the notes were replaced but the warnings added up, so a request that
// gpt-4o answered with the route's stop sequence and temperature was recorded as "not sent" both
// (true only of o3, which had failed).

const rig = useMockedGateway({
  "o3-then-gpt": {
    targets: [{ provider: "openai", model: "o3" }, { provider: "openai", model: "gpt-4o" }],
    policies: { stop: { sequences: ["END"] }, sampling: { temperature: { default: 0.2 } } },
  },
  "capped-claude-then-claude": {
    targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "anthropic", model: "claude-sonnet-4-5" }],
    policies: { maxTokens: { cap: 2000 } },
  },
}, [], { anthropic: { timeoutMs: 500 } });

describe("the record after a fallback", () => {
  it("warns of what the answering target was not sent, not of what the failed one was not", async () => {
    rig.mocks.openai.enqueue({ kind: "http-error", status: 500 });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "o3-then-gpt", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    const [failed, answered] = rig.mocks.openai.requests.slice(-2).map((request) => request.body);
    // o3 takes no stop sequences and only its default temperature; gpt-4o takes both.
    expect({ model: failed!.model, stop: failed!.stop, temperature: failed!.temperature }).toEqual({ model: "o3", stop: undefined, temperature: undefined });
    expect({ model: answered!.model, stop: answered!.stop, temperature: answered!.temperature }).toEqual({ model: "gpt-4o", stop: ["END"], temperature: 0.2 });
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings).toEqual([]);
    // What the fallback hid from the client is in the record.
    expect(record.fallbackFrom).toEqual([{ provider: "openai", model: "o3", errorType: "upstream" }]);
  });
});

describe("the record of a billed call before a fallback", () => {
  // Its own record (attemptOf) listed the route policies' notes, but not their warnings.
  it("carries the route policies' warnings beside their notes", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stall", afterChunks: 0 });
    const response = await postJson(rig.gateway, "/v1/messages", {
      model: "capped-claude-then-claude",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 3000 },
      stream: true,
      messages: [{ role: "user", content: "one two three" }],
    });
    await response.text();
    const id = response.headers.get("x-tollgate-request-id")!;
    expect((await waitForRecord(rig.gateway, id)).warnings.join()).toContain("thinking.budget_tokens 3000 was lowered to 1500");
    const earlier = (await ledgerRecords(rig.gateway)).find((record) => record.attemptOf === id);
    expect(earlier?.policies).toContain("thinking.budget_tokens=scaled:3000->1500");
    expect(earlier?.warnings.join()).toContain("thinking.budget_tokens 3000 was lowered to 1500");
  });
});
