import { describe, expect, it } from "vitest";
import { postJson, readSseEvents, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// What the Anthropic SDK's Message (and BetaMessage) types declare as always present: `container`
// and `context_management` (null where there is none), and in usage `inference_geo` (where
// inference ran: Anthropic's data-residency docs tell apps to check it) and `server_tool_use`.
// Was: absent, so an app checking `message.usage.inference_geo === "us"` behind tollgate failed.

const rig = useMockedGateway({ cached: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { responseCache: { ttlSeconds: 60 } } } });
const ask = { model: "claude", max_tokens: 50, messages: [{ role: "user" as const, content: "Hello?" }] };

describe("an Anthropic client's answer from Claude", () => {
  it("says where inference ran, streamed or not", async () => {
    const message = await rig.gateway.anthropic.messages.create({ ...ask, inference_geo: "us" });
    expect(message.usage.inference_geo).toBe("us");
    const streamed = await rig.gateway.anthropic.messages.stream({ ...ask, inference_geo: "us" }).finalMessage();
    expect(streamed.usage.inference_geo).toBe("us");
  });

  it("has container, context_management and usage.server_tool_use, null, as the SDK's types declare", async () => {
    for (const message of [await rig.gateway.anthropic.messages.create(ask), await rig.gateway.anthropic.messages.stream(ask).finalMessage()]) {
      expect(message).toMatchObject({ container: null, context_management: null });
      expect(message.usage.server_tool_use).toBeNull();
    }
  });

  it("says where inference ran from the response cache too, kept streamed or not", async () => {
    const cachedAsk = { ...ask, model: "cached", temperature: 0, inference_geo: "us" as const };
    await rig.gateway.anthropic.messages.stream({ ...cachedAsk, max_tokens: 51 }).finalMessage();
    expect((await rig.gateway.anthropic.messages.create({ ...cachedAsk, max_tokens: 51 })).usage.inference_geo).toBe("us");
    await rig.gateway.anthropic.messages.create({ ...cachedAsk, max_tokens: 52 });
    expect((await rig.gateway.anthropic.messages.stream({ ...cachedAsk, max_tokens: 52 }).finalMessage()).usage.inference_geo).toBe("us");
    expect(rig.mocks.anthropic.requests).toHaveLength(2);
  });

  it("says inference_geo null from a target that does not say where it ran", async () => {
    const message = await rig.gateway.anthropic.messages.create({ ...ask, model: "gpt" });
    expect(message.usage.inference_geo).toBeNull();
  });

  // usage.service_tier says which tier served the call; a Priority Tier app tracks its commitment
  // by it. Was: absent from every answer, streamed or not (the SDK read undefined).
  it("says the service tier Anthropic served it at, streamed or not, and the record is priced as before", async () => {
    const usage = { input_tokens: 1000, output_tokens: 100, service_tier: "priority" };
    rig.mocks.anthropic.enqueue({ kind: "text", usage });
    const { data: message, response } = await rig.gateway.anthropic.messages.create(ask).withResponse();
    expect(message.usage.service_tier).toBe("priority");
    rig.mocks.anthropic.enqueue({ kind: "text", usage });
    expect((await rig.gateway.anthropic.messages.stream(ask).finalMessage()).usage.service_tier).toBe("priority");
    // Carried, not priced: claude-sonnet-4-6 at $3 / $15 per 1M tokens, as for "standard".
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.cost.totalNano).toBe(4_500_000);
    expect(record.serviceTier).toBeUndefined();
  });

  it("says the service tier in message_start, where Anthropic says it", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", usage: { input_tokens: 10, output_tokens: 5, service_tier: "batch" } });
    const events = await readSseEvents(await postJson(rig.gateway, "/v1/messages", { ...ask, stream: true }));
    const start = JSON.parse(events.find((event) => event.event === "message_start")!.data);
    expect(start.message.usage.service_tier).toBe("batch");
  });

  it("says service_tier null from another provider, and standard from the response cache as Claude said it", async () => {
    expect((await rig.gateway.anthropic.messages.create({ ...ask, model: "gpt" })).usage.service_tier).toBeNull();
    const cachedAsk = { ...ask, model: "cached", temperature: 0, max_tokens: 53 };
    await rig.gateway.anthropic.messages.create(cachedAsk);
    expect((await rig.gateway.anthropic.messages.stream(cachedAsk).finalMessage()).usage.service_tier).toBe("standard");
  });
});

describe("a compaction request (the SDK tool runner's compactBeforeNextTurn)", () => {
  it("is a 400 naming compaction, before Claude is called: stripped, it was billed as an ordinary turn", async () => {
    const response = await postJson(rig.gateway, "/v1/messages", { ...ask, compaction: { type: "summarize" } });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.message).toMatch(/^compaction: tollgate does not carry compaction requests/);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});
