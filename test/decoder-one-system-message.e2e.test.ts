import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TINY_LOCAL_ANSWER, useLlamaGateway } from "./support/llama-server.ts";

// Many open models' chat templates take one system message, first, and then strictly alternating
// user and assistant turns (Mistral's and Gemma's raise "conversation roles must alternate").
// Served by llama-server (or vLLM) with such a template, a request with two system messages is
// a 400. An Anthropic client's system blocks are one system message each in tollgate's model,
// and so was every block sent on. The template below is written for this test in that style;
// the real llama-server runs it.
const TEMPLATE = `{%- if messages[0]['role'] == 'system' %}{%- set system = messages[0]['content'] %}{%- set turns = messages[1:] %}{%- else %}{%- set system = '' %}{%- set turns = messages %}{%- endif %}
{{- bos_token }}{%- for m in turns %}{%- if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}{{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}{%- endif %}
{%- if m['role'] == 'user' %}{{- '[INST] ' + (system + '\\n\\n' if loop.first and system else '') + m['content'] + '[/INST]' }}{%- else %}{{- m['content'] + eos_token }}{%- endif %}{%- endfor %}`;

const templateFile = join(mkdtempSync(join(tmpdir(), "tollgate-template-")), "one-system.jinja");
writeFileSync(templateFile, TEMPLATE);
const rig = await useLlamaGateway(["--jinja", "--chat-template-file", templateFile]);

describe.skipIf(rig.skipped)("system blocks for a decoder whose template takes one system message", () => {
  it("the decoder refuses two system messages itself (so the test below can fail)", async () => {
    const response = await fetch(`${rig.decoder!.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "system", content: "a" }, { role: "system", content: "b" }, { role: "user", content: "hi" }], max_tokens: 4 }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("roles must alternate");
  });

  it.each([false, true])("from an Anthropic client reach it as one system message (stream: %s)", async (stream) => {
    const request = {
      model: "local",
      max_tokens: 16,
      system: [
        { type: "text" as const, text: "You are a support agent for Acme." },
        { type: "text" as const, text: "Today is Tuesday.", cache_control: { type: "ephemeral" as const } },
      ],
      messages: [{ role: "user" as const, content: "Hello" }],
    };
    const message = stream ? await rig.gateway.anthropic.messages.stream(request).finalMessage() : await rig.gateway.anthropic.messages.create(request);
    expect(message.content).toEqual([{ type: "text", text: TINY_LOCAL_ANSWER }]);
  });

  it("and are counted as the chat sends them: count_tokens equals the input the chat is billed", async () => {
    const prompt = {
      model: "local",
      system: [
        { type: "text" as const, text: "You are a support agent for Acme." },
        { type: "text" as const, text: "Today is Tuesday." },
      ],
      messages: [{ role: "user" as const, content: "Hello" }],
    };
    const counted = await rig.gateway.anthropic.messages.countTokens(prompt);
    const answered = await rig.gateway.anthropic.messages.create({ ...prompt, max_tokens: 16 });
    // Anthropic's input_tokens leave out what the decoder's prefix cache read (the tests above sent this prefix).
    expect(counted.input_tokens).toBe(answered.usage.input_tokens + (answered.usage.cache_read_input_tokens ?? 0));
  });
});
