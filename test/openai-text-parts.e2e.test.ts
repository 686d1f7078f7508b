import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// The text parts of one OpenAI message are separate texts. Was: joined with nothing, so a tool
// result of "-3C" and "snow" reached the model as "-3Csnow", and a system message of "You are
// terse." and "Answer in French." as "You are terse.Answer in French.". A system or tool
// message's parts are now its lines (as an Anthropic client's tool_result blocks are); an
// assistant message's parts reach Claude as a text block each.

const rig = useMockedGateway();
const sentToClaude = () => rig.mocks.anthropic.requests.at(-1)!.body;
const sentToOpenAI = () => rig.mocks.openai.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
const weatherCall = { role: "assistant" as const, content: null, tool_calls: [{ id: "toolu_a", type: "function" as const, function: { name: "weather", arguments: "{}" } }] };
const twoPartSystem = { role: "system" as const, content: [{ type: "text" as const, text: "You are terse." }, { type: "text" as const, text: "Answer in French." }] };

describe("text parts of one OpenAI message", () => {
  it("a tool result's parts reach Claude a line each", async () => {
    await rig.gateway.openai.chat.completions.create({
      model: "claude",
      messages: [
        { role: "user", content: "Weather?" },
        weatherCall,
        { role: "tool", tool_call_id: "toolu_a", content: [{ type: "text", text: "-3C" }, { type: "text", text: "snow" }] },
      ],
    });
    expect(sentToClaude().messages[2].content).toEqual([{ type: "tool_result", tool_use_id: "toolu_a", content: "-3C\nsnow" }]);
  });

  it("a system message's parts reach Claude and OpenAI a line each", async () => {
    await rig.gateway.openai.chat.completions.create({ model: "claude", messages: [twoPartSystem, { role: "user", content: "hi" }] });
    expect(sentToClaude().system).toEqual([{ type: "text", text: "You are terse.\nAnswer in French." }]);
    await rig.gateway.openai.chat.completions.create({ model: "gpt", messages: [twoPartSystem, { role: "user", content: "hi" }] });
    expect(sentToOpenAI().messages[0]).toEqual({ role: "system", content: "You are terse.\nAnswer in French." });
  });

  it("an assistant message's parts reach Claude as a text block each", async () => {
    await rig.gateway.openai.chat.completions.create({
      model: "claude",
      messages: [
        { role: "user", content: "Two facts?" },
        { role: "assistant", content: [{ type: "text", text: "Oslo is cold." }, { type: "text", text: "Rome is warm." }] },
        { role: "user", content: "More." },
      ],
    });
    expect(sentToClaude().messages[1].content).toEqual([
      { type: "text", text: "Oslo is cold." },
      { type: "text", text: "Rome is warm." },
    ]);
  });
});
