import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// Brevity puts "Answer in at most N sentences." at the END of the system prompt (its first line
// belongs to the format instruction), also when the system prompt comes in several blocks.
// Used to be wrong: it was appended to the FIRST system block, in the middle of the prompt.

const rig = useMockedGateway({
  "brief-claude": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-5" }], policies: { brevity: { maxSentences: 3 } } },
  "brief-gpt": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { brevity: { maxSentences: 3 } } },
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

describe("brevity with a system message later in an OpenAI conversation", () => {
  // An agent framework's reminder is not the system prompt. The line went at the end of it, so
  // the client's later message reached OpenAI changed, and moved to the next reminder each turn:
  // the prefix OpenAI caches changed from turn to turn.
  const turn1 = [
    { role: "system" as const, content: "You are the support assistant." },
    { role: "user" as const, content: "first question" },
    { role: "assistant" as const, content: "first answer" },
    { role: "developer" as const, content: "Reminder: the user is on the free plan." },
    { role: "user" as const, content: "second question" },
  ];
  const sent = () => rig.mocks.openai.requests.at(-1)!.body.messages as { role: string; content: string }[];

  it("goes at the end of the system prompt, and the later message is sent as written", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "brief-gpt", messages: turn1 });
    expect(sent()[0]!.content).toBe("You are the support assistant.\nAnswer in at most 3 sentences.");
    expect(sent()[3]!.content).toBe("Reminder: the user is on the free plan.");
  });

  it("leaves what one turn sent as the start of what the next sends", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "brief-gpt", messages: turn1 });
    const first = sent();
    const turn2 = [...turn1, { role: "assistant" as const, content: "second answer" }, { role: "system" as const, content: "Reminder: be polite." }, { role: "user" as const, content: "third question" }];
    await rig.gateway.openai.chat.completions.create({ model: "brief-gpt", messages: turn2 });
    expect(sent().slice(0, first.length)).toEqual(first);
  });
});
