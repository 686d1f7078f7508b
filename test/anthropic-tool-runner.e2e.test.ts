import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { describe, expect, it } from "vitest";
import { useMockedGateway } from "./support/gateway.ts";

// The Anthropic SDK's tool runner (`client.beta.messages.toolRunner()`) uses message threads by
// default: its first turn sends `thread: {"type": "create"}` with the whole conversation, later
// turns only the new messages and `thread: {"type": "continue", …}`, trusting the server to keep
// the rest. tollgate keeps no conversations, so it refuses `thread` the way Anthropic refuses a
// request it cannot thread (400, error.details.error_code "thread_unsupported_request"), and the
// SDK then sends every turn whole (@anthropic-ai/sdk lib/internal/threads/ThreadState.js).
// Was: `thread` was dropped without a word, so the second turn reached the model with no context.

const rig = useMockedGateway();

const weather = betaTool({
  name: "weather",
  description: "The weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  run: async ({ city }) => `-3C in ${city}`,
});

async function runTwoTurns(route: string) {
  const runner = rig.gateway.anthropic.beta.messages.toolRunner({ model: route, max_tokens: 100, messages: [{ role: "user", content: "Weather in Oslo?" }], tools: [weather] });
  return runner.runUntilDone();
}

describe("the Anthropic SDK's tool runner through tollgate", () => {
  it("an OpenAI model's second turn carries the whole conversation", async () => {
    const before = rig.mocks.openai.requests.length;
    rig.mocks.openai.enqueue({ kind: "tool-calls", calls: [{ name: "weather", arguments: '{"city":"Oslo"}' }] }, { kind: "text", text: "Cold." });
    const final = await runTwoTurns("gpt");
    expect(final.content).toEqual([expect.objectContaining({ type: "text", text: "Cold." })]);
    const turns = rig.mocks.openai.requests.slice(before).map((request) => (request.body.messages as { role: string }[]).map((message) => message.role));
    expect(turns).toEqual([["user"], ["user", "assistant", "tool"]]);
  });

  it("an Anthropic model's second turn carries the user turn and the tool_use its result answers", async () => {
    const before = rig.mocks.anthropic.requests.length;
    rig.mocks.anthropic.enqueue({ kind: "tool-use", blocks: [{ name: "weather", input: { city: "Oslo" } }] }, { kind: "text", text: "Cold." });
    await runTwoTurns("claude");
    const turns = rig.mocks.anthropic.requests.slice(before).map((request) => (request.body.messages as { role: string }[]).map((message) => message.role));
    expect(turns).toEqual([["user"], ["user", "assistant", "user"]]);
    expect(rig.mocks.anthropic.requests.slice(before).every((request) => !("thread" in request.body))).toBe(true);
  });
});
