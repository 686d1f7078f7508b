import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { chunk, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";

// A decoder stream with an event that is not JSON in its middle, then more, then a normal finish.
// The event was skipped as if it were a cut stream's torn last one: the client got the rest as a
// whole answer ("The answer is" + " safe." without its " not"), recorded ok and cached as complete
// (found by review). The cloud adapters already failed such a stream; now this one does too.

let decoder: FakeDecoder;
let gateway: TestGateway;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  const base = testConfig(decoder.baseUrl);
  const cached = { targets: [{ provider: "local", model: "fake-model" }], policies: { responseCache: { ttlSeconds: 60 } } };
  gateway = await startTestGateway({ ...base, routes: { ...base.routes, cached } }, "undici");
});
afterAll(async () => {
  await gateway?.close();
  await decoder?.close();
});

function answerWithTornMiddle(): void {
  decoder.handle = (_body, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(chunk("c", { role: "assistant", content: "The answer is" }));
    response.write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" not\n\n');
    response.write(chunk("c", { content: " safe." }));
    response.write(chunk("c", {}, "stop"));
    response.end("data: [DONE]\n\n");
  };
}

describe("a decoder stream with an event that is not JSON in its middle", () => {
  it("fails for an OpenAI client, is recorded as an error, and is not cached", async () => {
    answerWithTornMiddle();
    const ask = { model: "cached", temperature: 0, messages: [{ role: "user" as const, content: "Is it safe?" }] };
    const { data: stream, response } = await gateway.openai.chat.completions.create({ ...ask, stream: true }).withResponse();
    let text = "";
    const failure = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? "";
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String(failure)).toContain("not JSON in the middle of its answer");
    expect(text).toBe("The answer is");
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.status).toBe("error");

    // Asked again: the decoder answers, nothing was kept for the cache.
    decoder.handle = (_body, reply) => {
      reply.writeHead(200, { "content-type": "text/event-stream" });
      reply.end(chunk("c", { role: "assistant", content: "It is not safe." }) + chunk("c", {}, "stop") + "data: [DONE]\n\n");
    };
    const again = await gateway.openai.chat.completions.create({ ...ask, stream: true }).withResponse();
    let second = "";
    for await (const part of again.data) second += part.choices[0]?.delta.content ?? "";
    expect(again.response.headers.get("x-tollgate-cache")).toBe("miss");
    expect(second).toBe("It is not safe.");
  });

  it("fails for an Anthropic client's stream helper", async () => {
    answerWithTornMiddle();
    const stream = gateway.anthropic.messages.stream({ model: "local", max_tokens: 50, messages: [{ role: "user", content: "Is it safe?" }] });
    await expect(stream.finalMessage()).rejects.toThrow(/not JSON in the middle of its answer/);
  });
});
