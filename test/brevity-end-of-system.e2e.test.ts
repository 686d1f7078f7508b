import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// Brevity puts "Answer in at most N sentences." at the END of the system prompt (its first line
// belongs to the format instruction), also when the system prompt comes in several blocks.
// Used to be wrong: it was appended to the FIRST system block, in the middle of the prompt.

const rig = useMockedGateway({
  "brief-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }], policies: { brevity: { maxSentences: 3 } } },
});

describe("brevity with a system prompt of several blocks", () => {
  it("goes at the end of the system prompt, after its last block", async () => {
    await rig.gateway.anthropic.messages.create({
      model: "brief-claude",
      max_tokens: 64,
      system: [
        { type: "text", text: "You are the support assistant of Example Corp.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Today's open tickets: none." },
      ],
      messages: [{ role: "user", content: "hi" }],
    });
    const system = rig.mocks.anthropic.requests.at(-1)!.body.system as { text: string }[];
    expect(system[0]!.text).toBe("You are the support assistant of Example Corp.");
    expect(system.at(-1)!.text.endsWith("Answer in at most 3 sentences.")).toBe(true);
  });
});
