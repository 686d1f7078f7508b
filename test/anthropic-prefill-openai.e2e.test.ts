import { describe, expect, it } from "vitest";
import type Anthropic from "@anthropic-ai/sdk";
import { useMockedGateway } from "./support/gateway.ts";

// An Anthropic client's prefill (its conversation ends with its own assistant turn, "{") on an
// OpenAI target. Chat Completions has no prefill: it answers such a conversation with a new
// assistant message, which often writes the prefill again. The client joins its prefill and the
// answer, so the answer is the continuation only: a repeated prefill is taken off its front, and
// an answer that carries on from the prefill is passed as it is. The usage is what OpenAI billed.
// Was: `{` + `{"a": 1}` = `{{"a": 1}`, which no JSON parser reads.

const rig = useMockedGateway();
const usage = { prompt_tokens: 12, completion_tokens: 7 };

function ask(question: string, prefill: string): Anthropic.MessageCreateParamsNonStreaming {
  return { model: "gpt", max_tokens: 50, messages: [{ role: "user", content: question }, { role: "assistant", content: prefill }] };
}

const textOf = (message: Anthropic.Message) => message.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe("an Anthropic client's prefill on an OpenAI target", () => {
  it("gets the answer without the prefill the model wrote again, billed as OpenAI counted it", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: '{"a": 1}', usage });
    const message = await rig.gateway.anthropic.messages.create(ask('Reply with {"a": 1} as JSON', "{"));
    expect(JSON.parse("{" + textOf(message))).toEqual({ a: 1 });
    expect(message.content).toEqual([{ type: "text", text: '"a": 1}' }]);
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    // The conversation reaches OpenAI as it is, ending with the prefill for the model to read.
    expect(rig.mocks.openai.requests[0]!.body.messages.at(-1)).toEqual({ role: "assistant", content: "{" });
  });

  it("streamed, gets the continuation only, the prefill held back only until the answer's first characters show it", async () => {
    // The repeated prefill `{"` comes in two chunks, the second ending past it.
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["{", '"a', '": 1}'], usage });
    const stream = rig.gateway.anthropic.messages.stream(ask('Reply with {"a": 1} as JSON, streamed', '{"'));
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    expect(deltas).toEqual(["a", '": 1}']);
    expect(JSON.parse('{"' + textOf(message))).toEqual({ a: 1 });
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
  });

  it("gets an answer that carries on from the prefill whole, streamed or not", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: '"a": 1}', usage });
    const message = await rig.gateway.anthropic.messages.create(ask('Reply with {"a": 1} as JSON, go on', "{"));
    expect(textOf(message)).toBe('"a": 1}');

    // "To" reads like the start of the prefill "Tom: ", until the next chunk shows it is not.
    rig.mocks.openai.enqueue({ kind: "text", chunks: ["To", " be or not to be"], usage });
    const stream = rig.gateway.anthropic.messages.stream(ask("Write Tom's line", "Tom: "));
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const streamed = await stream.finalMessage();
    expect(deltas).toEqual(["To", " be or not to be"]);
    expect(textOf(streamed)).toBe("To be or not to be");
    expect(streamed.usage).toMatchObject({ output_tokens: 7 });
  });
});
