import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// A tool_result's content may be several text blocks (the Messages API's ToolResultBlockParam).
// The neutral model keeps one text per tool result, so the blocks become its lines.
// Was: they were joined with nothing, "README.md" and "package.json" reaching the model as
// "README.mdpackage.json", even on an Anthropic-to-Anthropic route.

const rig = useMockedGateway();
const conversation = (model: string) => ({
  model,
  max_tokens: 50,
  tools: [{ name: "ls", input_schema: { type: "object" as const } }],
  messages: [
    { role: "user" as const, content: "List the files." },
    { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "toolu_1", name: "ls", input: {} }] },
    {
      role: "user" as const,
      content: [{ type: "tool_result" as const, tool_use_id: "toolu_1", content: [{ type: "text" as const, text: "README.md" }, { type: "text" as const, text: "package.json" }] }],
    },
  ],
});

describe("a tool_result of several text blocks", () => {
  it("reaches an Anthropic model as one text, a line per block", async () => {
    await rig.gateway.anthropic.messages.create(conversation("claude"));
    expect(rig.mocks.anthropic.requests.at(-1)!.body.messages.at(-1).content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "README.md\npackage.json" },
    ]);
  });

  it("reaches an OpenAI model as the tool message's text, a line per block", async () => {
    await rig.gateway.anthropic.messages.create(conversation("gpt"));
    const tool = (rig.mocks.openai.requests.at(-1)!.body.messages as { role: string; content: unknown }[]).find((message) => message.role === "tool");
    expect(tool).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "README.md\npackage.json" });
  });
});
