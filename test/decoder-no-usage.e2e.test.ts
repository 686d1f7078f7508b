import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { chunk, completion, sendJson, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";

// A decoder that reports no usage (a server that ignores stream_options.include_usage, or answers
// without `usage`). tollgate counts the tokens itself and bills that (record `estimated`,
// x-tollgate-input/output-tokens); the body the client gets says the same figures (or none).
// Used to be wrong: the body said 0 prompt and 0 completion tokens for a request tollgate billed.

let decoder: FakeDecoder;
let gateway: TestGateway;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  const base = testConfig(decoder.baseUrl);
  gateway = await startTestGateway({ ...base, routes: { ...base.routes, quiet: { targets: [{ provider: "local", model: "fake-model" }] } } }, "undici");
});
afterAll(async () => {
  await gateway?.close();
  await decoder?.close();
});

const messages = [{ role: "user" as const, content: "hi, how are you doing today, my friend?" }];
// What tollgate counts (o200k_base) when the decoder reports nothing: the prompt's 11 tokens + 3 for
// its one message + 3 for the reply primer; "Hello there, friend." is 5 tokens, with " I am well." 9.
const COUNTED_INPUT = 17;
const COUNTED_SHORT_ANSWER = 5;
const COUNTED_LONG_ANSWER = 9;

describe("a local decoder that reports no usage", () => {
  it("streamed, include_usage: the client's usage chunk is not a fabricated zero", async () => {
    decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk("c", { role: "assistant", content: "" }) + chunk("c", { content: "Hello there, friend. I am well." }) + chunk("c", {}, "stop") + "data: [DONE]\n\n");
    };
    const { data: stream, response } = await gateway.openai.chat.completions
      .create({ model: "quiet", messages, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let usage;
    for await (const part of stream) usage = part.usage ?? usage;
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    // What tollgate bills...
    expect(record).toMatchObject({ estimated: true, usage: { inputTokens: COUNTED_INPUT, outputTokens: COUNTED_LONG_ANSWER } });
    // ...is what the usage chunk the client asked for says.
    expect(usage).toMatchObject({ prompt_tokens: COUNTED_INPUT, completion_tokens: COUNTED_LONG_ANSWER, total_tokens: COUNTED_INPUT + COUNTED_LONG_ANSWER });
  });

  it("not streamed: the answer's usage is not a fabricated zero", async () => {
    decoder.handle = (_body, response) => sendJson(response, completion("c", { content: "Hello there, friend." }, "stop"));
    const { data, response } = await gateway.openai.chat.completions.create({ model: "quiet", messages }).withResponse();
    expect(response.headers.get("x-tollgate-input-tokens")).toBe(String(COUNTED_INPUT));
    expect(response.headers.get("x-tollgate-output-tokens")).toBe(String(COUNTED_SHORT_ANSWER));
    expect(data.usage).toMatchObject({ prompt_tokens: COUNTED_INPUT, completion_tokens: COUNTED_SHORT_ANSWER, total_tokens: COUNTED_INPUT + COUNTED_SHORT_ANSWER });
  });

  // Anthropic's Message.usage is required: an Anthropic client gets the counted figures.
  it("Anthropic client, streamed: the final message's usage is what tollgate bills", async () => {
    decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk("c", { role: "assistant", content: "" }) + chunk("c", { content: "Hello there, friend. I am well." }) + chunk("c", {}, "stop") + "data: [DONE]\n\n");
    };
    const stream = gateway.anthropic.messages.stream({ model: "quiet", max_tokens: 64, messages });
    const { response } = await stream.withResponse();
    const message = await stream.finalMessage();
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({ estimated: true, usage: { inputTokens: COUNTED_INPUT, outputTokens: COUNTED_LONG_ANSWER } });
    expect(message.usage).toMatchObject({ input_tokens: COUNTED_INPUT, output_tokens: COUNTED_LONG_ANSWER });
  });

  it("Anthropic client, not streamed: the message's usage is what tollgate bills", async () => {
    decoder.handle = (_body, response) => sendJson(response, completion("c", { content: "Hello there, friend." }, "stop"));
    const { data, response } = await gateway.anthropic.messages.create({ model: "quiet", max_tokens: 64, messages }).withResponse();
    expect([response.headers.get("x-tollgate-input-tokens"), response.headers.get("x-tollgate-output-tokens")]).toEqual([String(COUNTED_INPUT), String(COUNTED_SHORT_ANSWER)]);
    expect(data.usage).toMatchObject({ input_tokens: COUNTED_INPUT, output_tokens: COUNTED_SHORT_ANSWER });
  });
});
