import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Context editing (the `context-management-2025-06-27` beta): `context_management.edits` asks
// Anthropic to clear old tool results or thinking before Claude reads the conversation, to keep
// long agent runs within the context and cheaper; the answer says what was applied
// (`context_management.applied_edits`, on the Message and on message_delta, which the SDK's beta
// stream copies). The SDK's memory tool is documented with it. Was: stripped, so the client paid
// for the whole history while believing it trimmed, and never saw the report.

const rig = useMockedGateway();
const edits = { edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "input_tokens", value: 30_000 }, keep: { type: "tool_uses", value: 3 } }] };
const applied = { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 4, cleared_input_tokens: 12_000 }] };
const ask = { model: "claude", max_tokens: 50, messages: [{ role: "user" as const, content: "Carry on." }], context_management: edits, betas: ["context-management-2025-06-27"] };

describe("context_management", () => {
  it("reaches Claude as sent, and what Claude applied reaches the client", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", contextManagement: applied });
    const message = await rig.gateway.anthropic.beta.messages.create(ask as never);
    const sent = rig.mocks.anthropic.requests.at(-1)!;
    expect(sent.body.context_management).toEqual(edits);
    expect(sent.headers["anthropic-beta"]).toBe("context-management-2025-06-27");
    expect(message.context_management).toEqual(applied);
  });

  it("streamed: the report reaches the SDK's finalMessage() from message_delta", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", contextManagement: applied });
    const message = await rig.gateway.anthropic.beta.messages.stream(ask as never).finalMessage();
    expect(message.context_management).toEqual(applied);
  });

  it("reaches count_tokens, and the count before the edits comes back with the count", async () => {
    rig.mocks.anthropic.enqueueCountTokens({ kind: "count", inputTokens: 18_000, contextManagement: { original_input_tokens: 30_000 } });
    const { max_tokens: _max, ...countAsk } = ask;
    const counted = await rig.gateway.anthropic.beta.messages.countTokens(countAsk as never);
    const sent = rig.mocks.anthropic.requests.at(-1)!;
    expect(sent.url).toContain("/v1/messages/count_tokens");
    expect(sent.body.context_management).toEqual(edits);
    expect(counted).toEqual({ input_tokens: 18_000, context_management: { original_input_tokens: 30_000 } });
  });

  it("is dropped with a note for an OpenAI model, which reads the conversation whole", async () => {
    const { betas: _betas, ...body } = ask;
    const response = await postJson(rig.gateway, "/v1/messages", { ...body, model: "gpt" });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body).not.toHaveProperty("context_management");
    expect(response.headers.get("x-tollgate-policies")).toContain("context_management=dropped");
  });

  // A compact edit makes Claude answer with a compaction block (the SDK: "to be round-tripped
  // verbatim"), which tollgate has no form for: dropped, the next turn compacts and bills again.
  it("with a compact edit is a 400 naming it, before Claude is called", async () => {
    const { betas: _betas, ...body } = ask;
    const response = await postJson(rig.gateway, "/v1/messages", { ...body, context_management: { edits: [{ type: "compact_20260112" }] } });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/^context_management\.edits\[0\]\.type: tollgate does not carry compaction/);
    expect(rig.mocks.anthropic.requests).toHaveLength(0);
  });
});
