import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, ledgerRecords, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { chunk, completion, sendJson, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";

// Reasoning models on local decoders stream their thinking as its own delta field before any
// content: llama-server `delta.reasoning_content` (its default --reasoning-format), vLLM
// `delta.reasoning` (reasoning_content before v0.11), Ollama's /v1 `delta.reasoning`. The
// thinking is a stream part of its own: the idle deadline sees it (a thinking stream is not
// silent) and the meter bills it when the client leaves mid-thought.
// Used to be wrong: the adapter read only content, refusal and tool_calls, so no part came until
// the first answer token (streamIdleTimeoutMs cut the stream; a client leaving mid-thought was
// billed 0 output tokens).

let decoder: FakeDecoder;
let gateway: TestGateway;

const THOUGHT = "First I add the two numbers together and then I check the sum twice. ";

/** role chunk, `steps` reasoning deltas `everyMs` apart, then the answer, finish, usage, [DONE]. */
function thinkThenAnswer(field: "reasoning_content" | "reasoning", steps: number, everyMs: number) {
  return (_body: Record<string, unknown>, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(chunk("cmpl-r", { role: "assistant", content: null }));
    let sent = 0;
    const timer = setInterval(() => {
      if (response.destroyed) return clearInterval(timer);
      if (sent < steps) {
        sent++;
        return void response.write(chunk("cmpl-r", { [field]: THOUGHT }));
      }
      clearInterval(timer);
      response.end(
        chunk("cmpl-r", { content: "42." }) +
          chunk("cmpl-r", {}, "stop") +
          chunk("cmpl-r", null, null, { usage: { prompt_tokens: 20, completion_tokens: steps * 15 + 2, total_tokens: 20 + steps * 15 + 2 } }) +
          "data: [DONE]\n\n",
      );
    }, everyMs);
    response.on("close", () => clearInterval(timer));
  };
}

beforeAll(async () => {
  decoder = await startFakeDecoder();
  const base = testConfig(decoder.baseUrl);
  const local = (base.providers as Record<string, object>).local!;
  gateway = await startTestGateway(
    {
      ...base,
      providers: {
        ...base.providers,
        // A decoder allowed 250 ms of silence between two chunks once its stream has started.
        "local-idle": { ...local, streamIdleTimeoutMs: 250 },
      },
      routes: {
        ...base.routes,
        thinker: { targets: [{ provider: "local-idle", model: "fake-model" }] },
        "thinker-patient": { targets: [{ provider: "local", model: "fake-model" }] },
      },
    },
    "undici",
  );
});
afterAll(async () => {
  await gateway?.close();
  await decoder?.close();
});

describe("a local reasoning model that streams its thinking", () => {
  it.each(["reasoning_content", "reasoning"] as const)(
    "is not cut off as 'silent' while it streams %s chunks every 50 ms (streamIdleTimeoutMs 250)",
    async (field) => {
      // 12 reasoning chunks, 50 ms apart: the decoder is never silent for more than 50 ms.
      decoder.handle = thinkThenAnswer(field, 12, 50);
      let text = "";
      let failure: unknown;
      try {
        const stream = await gateway.openai.chat.completions.create({ model: "thinker", messages: [{ role: "user", content: "what is 40 + 2?" }], stream: true });
        for await (const part of stream) text += part.choices[0]?.delta.content ?? "";
      } catch (error) {
        failure = error;
      }
      expect(String(failure ?? "")).toBe("");
      expect(text).toBe("42.");
    },
  );

  it("bills the reasoning tokens that came back when the client leaves mid-thought", async () => {
    decoder.handle = thinkThenAnswer("reasoning_content", 40, 25);
    const before = new Set((await ledgerRecords(gateway)).map((record) => record.requestId));
    const client = new AbortController();
    const response = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "thinker-patient", messages: [{ role: "user", content: "think hard" }], stream: true }),
      signal: client.signal,
    }).then((answer) => answer.text());
    // ~16 reasoning chunks (about 240 o200k tokens of thinking) have streamed back by now.
    await new Promise((resolve) => setTimeout(resolve, 400));
    client.abort();
    await response.catch(() => undefined);
    let record;
    for (let i = 0; i < 100 && !record; i++) {
      await gateway.ledger.flush();
      record = (await ledgerRecords(gateway)).find((found) => !before.has(found.requestId) && found.route === "thinker-patient");
      if (!record) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(record).toMatchObject({ status: "aborted", estimated: true });
    expect(record!.usage.outputTokens).toBeGreaterThan(100);
  });
});

describe("what the clients get of a local model's thinking", () => {
  const thought = (response: ServerResponse) => sendJson(response, completion("cmpl-n", { reasoning_content: THOUGHT, content: "42." }, "stop"));

  it("an OpenAI client gets it as llama-server sends it, streamed and not", async () => {
    decoder.handle = thinkThenAnswer("reasoning", 2, 5);
    const stream = await gateway.openai.chat.completions.create({ model: "thinker-patient", messages: [{ role: "user", content: "what is 40 + 2?" }], stream: true });
    let reasoning = "";
    for await (const part of stream) reasoning += (part.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? "";
    expect(reasoning).toBe(THOUGHT + THOUGHT);

    decoder.handle = (_body, response) => thought(response);
    const answer = await gateway.openai.chat.completions.create({ model: "thinker-patient", messages: [{ role: "user", content: "what is 40 + 2?" }] });
    expect(answer.choices[0]!.message).toMatchObject({ content: "42.", reasoning_content: THOUGHT });
  });

  it("an Anthropic client gets the answer alone (no thinking block it did not ask for)", async () => {
    decoder.handle = (_body, response) => thought(response);
    const message = await gateway.anthropic.messages.create({ model: "thinker-patient", max_tokens: 64, messages: [{ role: "user", content: "what is 40 + 2?" }] });
    expect(message.content).toEqual([{ type: "text", text: "42." }]);
  });
});
