import { describe, expect, it } from "vitest";
import { completion, sendJson } from "./support/fake-decoder.ts";
import { useDecoderWithClouds } from "./support/decoder-rig.ts";
import { postJson } from "./support/gateway.ts";

// vLLM's and SGLang's own sampling options, which an OpenAI SDK sends through `extra_body`
// (vLLM: vllm/entrypoints/openai protocol, ChatCompletionRequest's sampling and extra params).
// Each changes the answer or its length: chat_template_kwargs {"enable_thinking": false} is how
// Qwen3 is told not to think (thinking it would bill). Was: the request schema stripped them, the
// answer came back 200, and the app could not tell that the decoder never saw them.

const OPTIONS = {
  repetition_penalty: 1.3,
  min_tokens: 5,
  ignore_eos: true,
  stop_token_ids: [151645],
  chat_template_kwargs: { enable_thinking: false },
};
const hi = [{ role: "user" as const, content: "hi" }];

const rig = useDecoderWithClouds(
  (base) => ({ ...base, routes: { ...base.routes, "gpt-strict": { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { sampling: { onUnsupported: "reject" } } } } }),
  (_body, response) => sendJson(response, completion("x", { content: "hello" }, "stop", { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })),
);

describe("a local decoder's own sampling options", () => {
  it("reach a local decoder as sent, through the OpenAI SDK's extra_body", async () => {
    const answer = await rig.gateway.openai.chat.completions.create({ model: "local", messages: hi, max_tokens: 16 }, { body: { model: "local", messages: hi, max_tokens: 16, ...OPTIONS } });
    expect(answer.choices[0]!.message.content).toBe("hello");
    expect(rig.decoder.requests.at(-1)).toMatchObject(OPTIONS);
  });

  it("are dropped for OpenAI and Claude, each with a note saying so", async () => {
    for (const [route, sent] of [
      ["gpt", () => rig.mocks.openai.requests.at(-1)!.body],
      ["claude", () => rig.mocks.anthropic.requests.at(-1)!.body],
    ] as const) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, messages: hi, max_tokens: 16, ...OPTIONS });
      expect(response.status).toBe(200);
      const body = sent() as Record<string, unknown>;
      for (const field of Object.keys(OPTIONS)) expect(body[field]).toBeUndefined();
      const notes = response.headers.get("x-tollgate-policies") ?? "";
      for (const field of Object.keys(OPTIONS)) expect(notes).toContain(`${field}=dropped`);
    }
  });

  it("are a 400 naming the field on a route that rejects what its target does not take", async () => {
    const before = rig.mocks.openai.requests.length;
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt-strict", messages: hi, repetition_penalty: 1.3 });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "repetition_penalty", code: "unsupported_parameter" });
    expect(rig.mocks.openai.requests.length).toBe(before);
  });

  // The template is the decoder operator's: a request's own replaced the server's in vLLM before
  // 0.11 (GHSA-6fvq-23cw-5628), so any key could run its own Jinja (a nested loop pins the
  // decoder's CPU for every tenant). Was: passed on as sent.
  it("a chat template inside chat_template_kwargs is a 400 naming it, and the decoder is not called", async () => {
    const before = rig.decoder.requests.length;
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: hi, chat_template_kwargs: { enable_thinking: false, chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}" } });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "chat_template_kwargs.chat_template", message: expect.stringContaining("the decoder's operator sets it") });
    expect(rig.decoder.requests.length).toBe(before);
  });

  it("a value no decoder takes is a 400 naming the field", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: hi, repetition_penalty: 0 });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "repetition_penalty" });
  });
});
