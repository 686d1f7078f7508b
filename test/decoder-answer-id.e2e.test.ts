import { describe, expect, it } from "vitest";
import { chunk, sendJson } from "./support/fake-decoder.ts";
import { useDecoderRig } from "./support/decoder-rig.ts";

// Some local servers send answers with no id. Both SDKs type `id` as always there, and apps keep
// answers by it. Was: no `id` at all in an answer not streamed, and the fixed "msg_tollgate" /
// "chatcmpl-tollgate" on every streamed one, so every such answer read as the same message.

const rig = useDecoderRig();
const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
const withoutId = JSON.stringify({ object: "chat.completion", created: 1, model: "fake-model", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage });

describe("a decoder's answer without an id", () => {
  it("not streamed: each answer has an id of its own, in each dialect's form", async () => {
    rig.decoder.handle = (_body, response) => sendJson(response, withoutId);
    const messages = await Promise.all([1, 2].map(() => rig.gateway.anthropic.messages.create({ model: "local", max_tokens: 10, messages: [{ role: "user", content: "x" }] })));
    expect(messages[0]!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(messages[1]!.id).not.toBe(messages[0]!.id);
    const completions = await Promise.all([1, 2].map(() => rig.gateway.openai.chat.completions.create({ model: "local", messages: [{ role: "user", content: "x" }] })));
    expect(completions[0]!.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(completions[1]!.id).not.toBe(completions[0]!.id);
  });

  it("streamed: every chunk of an answer carries its id, and each answer has its own", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk("", { role: "assistant", content: "" }) + chunk("", { content: "hi" }, "stop") + chunk("", null, null, { usage }) + "data: [DONE]\n\n");
    };
    const answers = await Promise.all(
      [1, 2].map(async () => {
        const ids = new Set<string>();
        for await (const part of await rig.gateway.openai.chat.completions.create({ model: "local", stream: true, messages: [{ role: "user", content: "x" }] })) ids.add(part.id);
        return [...ids];
      }),
    );
    expect(answers[0]).toHaveLength(1);
    expect(answers[0]![0]).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(answers[1]).not.toEqual(answers[0]);
    const message = await rig.gateway.anthropic.messages.stream({ model: "local", max_tokens: 10, messages: [{ role: "user", content: "x" }] }).finalMessage();
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});
