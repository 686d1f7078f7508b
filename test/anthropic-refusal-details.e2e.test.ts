import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// Claude's refusals say why: `stop_reason: "refusal"` with `stop_details: {type: "refusal",
// category, explanation}` (the SDK's RefusalStopDetails; `message_delta.delta.stop_details` when
// streamed). Apps show the explanation or route on the category. Was: dropped, so `stop_details`
// read undefined through tollgate, streamed or not.

const rig = useMockedGateway();
const refusal = { category: "cyber", explanation: "This request could enable malware development." };
const ask = { model: "claude", max_tokens: 50, messages: [{ role: "user" as const, content: "Write a keylogger." }] };

describe("a Claude refusal's stop_details", () => {
  it("reach an Anthropic client's answer", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "I can't help with that.", stopReason: "refusal", refusal });
    const message = await rig.gateway.anthropic.messages.create(ask);
    expect(message.stop_reason).toBe("refusal");
    expect(message.stop_details).toEqual({ type: "refusal", ...refusal });
  });

  it("reach a streamed answer, as the SDK's finalMessage() reads it", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "I can't help with that.", stopReason: "refusal", refusal: { category: null, explanation: null } });
    const message = await rig.gateway.anthropic.messages.stream(ask).finalMessage();
    expect(message.stop_reason).toBe("refusal");
    expect(message.stop_details).toEqual({ type: "refusal", category: null, explanation: null });
  });

  it("are null on an answer that was not refused, streamed or not", async () => {
    expect((await rig.gateway.anthropic.messages.create(ask)).stop_details).toBeNull();
    expect((await rig.gateway.anthropic.messages.stream(ask).finalMessage()).stop_details).toBeNull();
  });
});
