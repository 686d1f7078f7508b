import { describe, expect, it } from "vitest";
import { chunk, completion, sendJson } from "./support/fake-decoder.ts";
import { useDecoderRig } from "./support/decoder-rig.ts";

// vLLM's choices carry `stop_reason`, SGLang's `matched_stop`: the stop string (or a stop token's
// id, which for SGLang includes EOS) that ended the answer. An Anthropic client that sent stop_sequences expects stop_reason "stop_sequence" and the
// sequence in `stop_sequence` (REFERENCE.md); an OpenAI client still sees finish_reason "stop".
// Was: only finish_reason was read, and Anthropic clients got "end_turn" and null.

const rig = useDecoderRig();

const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

describe("a local decoder's stop_reason", () => {
  it("streamed: an Anthropic client gets stop_reason stop_sequence, naming it", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        chunk("c1", { role: "assistant", content: "" }) +
          chunk("c1", { content: "abc" }) +
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "fake-model", choices: [{ index: 0, delta: {}, finish_reason: "stop", stop_reason: "END" }] })}\n\n` +
          chunk("c1", null, null, { usage }) +
          "data: [DONE]\n\n",
      );
    };
    const message = await rig.gateway.anthropic.messages.stream({ model: "local", max_tokens: 10, stop_sequences: ["END"], messages: [{ role: "user", content: "x" }] }).finalMessage();
    expect({ stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
  });

  it("not streamed: the same, and an OpenAI client sees finish_reason stop", async () => {
    rig.decoder.handle = (_body, response) => sendJson(response, completion("c2", { content: "abc" }, "stop", { usage }, { stop_reason: "END" }));
    const message = await rig.gateway.anthropic.messages.create({ model: "local", max_tokens: 10, stop_sequences: ["END"], messages: [{ role: "user", content: "x" }] });
    expect({ stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });
    const answer = await rig.gateway.openai.chat.completions.create({ model: "local", stop: ["END"], messages: [{ role: "user", content: "x" }] });
    expect(answer.choices[0]!.finish_reason).toBe("stop");
  });

  // SGLang names the field matched_stop, and puts the EOS token's id there on a natural end.
  it("SGLang's matched_stop: a string is the stop sequence, EOS's token id is a natural end", async () => {
    rig.decoder.handle = (_body, response) => sendJson(response, completion("c3", { content: "abc" }, "stop", { usage }, { matched_stop: "END" }));
    const stopped = await rig.gateway.anthropic.messages.create({ model: "local", max_tokens: 10, stop_sequences: ["END"], messages: [{ role: "user", content: "x" }] });
    expect({ stop_reason: stopped.stop_reason, stop_sequence: stopped.stop_sequence }).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" });

    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        chunk("c4", { role: "assistant", content: "" }) +
          chunk("c4", { content: "abc" }) +
          `data: ${JSON.stringify({ id: "c4", object: "chat.completion.chunk", created: 1, model: "fake-model", choices: [{ index: 0, delta: {}, finish_reason: "stop", matched_stop: 128009 }] })}\n\n` +
          chunk("c4", null, null, { usage }) +
          "data: [DONE]\n\n",
      );
    };
    const ended = await rig.gateway.anthropic.messages.stream({ model: "local", max_tokens: 10, stop_sequences: ["END"], messages: [{ role: "user", content: "x" }] }).finalMessage();
    expect({ stop_reason: ended.stop_reason, stop_sequence: ended.stop_sequence }).toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });

  // SGLang serving a named chat template adds the template's stop strings to every request and
  // reports them on a natural end: not a stop sequence the client sent.
  it("a matched stop the request never sent (a chat template's <|im_end|>) is a natural end", async () => {
    rig.decoder.handle = (_body, response) => sendJson(response, completion("c5", { content: "abc" }, "stop", { usage }, { matched_stop: "<|im_end|>" }));
    const ended = await rig.gateway.anthropic.messages.create({ model: "local", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    expect({ stop_reason: ended.stop_reason, stop_sequence: ended.stop_sequence }).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    const asked = await rig.gateway.anthropic.messages.create({ model: "local", max_tokens: 10, stop_sequences: ["END"], messages: [{ role: "user", content: "x" }] });
    expect({ stop_reason: asked.stop_reason, stop_sequence: asked.stop_sequence }).toEqual({ stop_reason: "end_turn", stop_sequence: null });
  });
});
