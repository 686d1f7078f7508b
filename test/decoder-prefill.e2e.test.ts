import { describe, expect, it } from "vitest";
import { completion, sendJson } from "./support/fake-decoder.ts";
import { useDecoderRig } from "./support/decoder-rig.ts";

// An Anthropic client's prefill (its conversation ends with its own assistant turn): the answer is
// the continuation only. vLLM continues the turn when asked (continue_final_message) and answers
// the continuation alone (serving_chat.py adds the turn's text only with `echo`); llama-server
// repeats it in answers not streamed, and only llama-server sends `timings`
// (local-decoder.e2e.test.ts runs the real one). Was: every decoder's answer that began like the
// prefill lost that beginning: prefill "[" and answer "[1, 2], [3, 4]]" came back as "1, 2], [3, 4]]".

const rig = useDecoderRig();
const usage = { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 };
const ask = { model: "local", max_tokens: 20, messages: [{ role: "user" as const, content: "Two pairs, as JSON" }, { role: "assistant" as const, content: "[" }] };

describe("an Anthropic client's prefill on a local decoder", () => {
  it("is continued (vLLM, SGLang), and an answer that starts like it is kept whole", async () => {
    let sent: Record<string, unknown> = {};
    rig.decoder.handle = (body, response) => {
      sent = body as Record<string, unknown>;
      sendJson(response, completion("c1", { content: "[1, 2], [3, 4]]" }, "stop", { usage }));
    };
    const message = await rig.gateway.anthropic.messages.create(ask);
    expect(sent).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(message.content).toEqual([{ type: "text", text: "[1, 2], [3, 4]]" }]);
  });

  it("is taken off the front of llama-server's answer, which repeats it (llama-server sends timings)", async () => {
    const timings = { prompt_n: 5, prompt_ms: 1, predicted_n: 9, predicted_ms: 2, predicted_per_second: 4500 };
    rig.decoder.handle = (_body, response) => sendJson(response, completion("c2", { content: "[[1, 2], [3, 4]]" }, "stop", { usage, timings }));
    const message = await rig.gateway.anthropic.messages.create(ask);
    expect(message.content).toEqual([{ type: "text", text: "[1, 2], [3, 4]]" }]);
  });
});
