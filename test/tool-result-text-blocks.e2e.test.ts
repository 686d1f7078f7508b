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

// A screenshot, then its caption: the order the client wrote them in reaches Claude. Was: the text
// was moved before the image, so the caption read as coming first.
describe("a tool_result of an image, then its text", () => {
  const screenshot = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" } };
  const withBlocks = (blocks: unknown[]) => ({
    ...conversation("claude"),
    messages: [
      ...conversation("claude").messages.slice(0, 2),
      { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "toolu_1", content: blocks }] },
    ],
  });

  it("reaches Claude in that order, and text then image stays so too", async () => {
    const caption = { type: "text" as const, text: "The login page after the fix." };
    await rig.gateway.anthropic.messages.create(withBlocks([screenshot, caption]) as never);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.messages.at(-1).content[0].content).toEqual([screenshot, caption]);
    await rig.gateway.anthropic.messages.create(withBlocks([caption, screenshot]) as never);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.messages.at(-1).content[0].content).toEqual([caption, screenshot]);
  });
});
