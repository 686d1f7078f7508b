// An OpenAI-shaped answer that calls a tool but finishes with "stop" (vLLM for a named
// tool_choice, by design: its chat serving says "'stop' for named tool calls"; Ollama's stream,
// which sends the calls and then a separate "stop" chunk, ollama#9632) reached Anthropic clients
// as stop_reason "end_turn", and the Anthropic SDK's tool runner, which runs tools only on
// "tool_use", never ran the tool. An answer with tool_use blocks that simply stopped is a
// "tool_use" answer now, as Claude's own are.
import { describe, expect, it } from "vitest";
import { chunk, completion, sendJson, useDecoderRig } from "./support/decoder-rig.ts";

const rig = useDecoderRig();
const tools = [{ name: "weather", description: "The weather in a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } }];
const usage = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 };

describe("a local decoder's tool call with finish_reason \"stop\", to an Anthropic client", () => {
  it("vLLM, named tool_choice, not streamed: stop_reason is tool_use", async () => {
    rig.decoder.handle = (_body, res) =>
      sendJson(
        res,
        completion("c1", { content: null, tool_calls: [{ id: "chatcmpl-tool-1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] }, "stop", { usage }),
      );
    const message = await rig.gateway.anthropic.messages.create({
      model: "local",
      max_tokens: 100,
      tools,
      tool_choice: { type: "tool", name: "weather" },
      messages: [{ role: "user", content: "Weather in Oslo?" }],
    });
    expect(message.content).toEqual([expect.objectContaining({ type: "tool_use", name: "weather", input: { city: "Oslo" } })]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("Ollama, streamed (tool calls chunk, then a separate finish_reason \"stop\" chunk): stop_reason is tool_use", async () => {
    rig.decoder.handle = (_body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("c2", { role: "assistant", content: "", tool_calls: [{ index: 0, id: "call_abc", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] }));
      res.write(chunk("c2", { role: "assistant", content: "" }, "stop"));
      res.write(chunk("c2", null, null, { usage }));
      res.end("data: [DONE]\n\n");
    };
    const stream = rig.gateway.anthropic.messages.stream({ model: "local", max_tokens: 100, tools, messages: [{ role: "user", content: "Weather in Oslo?" }] });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([expect.objectContaining({ type: "tool_use", name: "weather", input: { city: "Oslo" } })]);
    expect(message.stop_reason).toBe("tool_use");
  });
});
