// llama-server builds before llama.cpp PR #16486 (October 2025; many deployments still run them)
// report a failure after their HTTP 200 as an SSE line of an `error` field, then `data: [DONE]`:
//   error: {"code":500,"message":"…","type":"server_error"}
// (server.cpp: server_sent_event(sink, "error", error_data)). SSE readers drop unknown fields, so
// tollgate saw a stream cut short: the failed local call was billed (an `attemptOf` record of an
// estimated prompt) and a context overflow reached the client as a 502 "stopped before the
// answer was complete". It is read as the error event it is now.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { ledgerRecords, postJson, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";

let decoder: FakeDecoder;
let mocks: MockProviders;
let gateway: TestGateway;
beforeAll(async () => {
  decoder = await startFakeDecoder();
  mocks = startMockProviders();
  const base = testConfig(decoder.baseUrl);
  gateway = await startTestGateway(
    { ...base, routes: { ...base.routes, thrifty: { targets: [{ provider: "local", model: "tiny-local" }, { provider: "openai", model: "gpt-4o" }] } } },
    "fetch",
  );
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
  await decoder?.close();
});

/** What llama-server writes for a streamed request that fails after its 200. */
function legacyErrorEvent(error: Record<string, unknown>) {
  return (_body: unknown, res: import("node:http").ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`error: ${JSON.stringify(error)}\n\n`);
    res.end("data: [DONE]\n\n");
  };
}

describe("llama-server's `error:` event in a 200 stream", () => {
  it("local-first route: the cloud answers, and the refused local call is not billed (no attemptOf record)", async () => {
    decoder.handle = legacyErrorEvent({ code: 500, message: "Failed to decode the batch", type: "server_error" });
    mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "thrifty", stream: true, messages: [{ role: "user", content: "hi there" }] });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("rescued");
    const id = response.headers.get("x-tollgate-request-id")!;
    expect((await waitForRecord(gateway, id)).provider).toBe("openai");
    const billedLocal = (await ledgerRecords(gateway)).filter((record) => record.attemptOf === id).map((r) => ({ provider: r.provider, totalNano: r.cost.totalNano, estimated: r.estimated }));
    expect(billedLocal).toEqual([]);
  });

  it("local-only route: a context overflow reaches the client as 400 context_length_exceeded, with the decoder's message", async () => {
    decoder.handle = legacyErrorEvent({ code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 5000, n_ctx: 4096 });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "local", stream: true, messages: [{ role: "user", content: "a very long prompt" }] });
    const body = (await response.json()) as { error: { code: string | null; message: string } };
    expect({ status: response.status, code: body.error.code }).toEqual({ status: 400, code: "context_length_exceeded" });
    expect(body.error.message).toContain("exceeds the available context size");
  });
});

// Some servers send an error event with its message alone: `data: {"error": "text"}`. It was
// read as no error at all and reported as "could not reach provider".
describe("an error event whose error is a string", () => {
  it("reaches the client mid-stream with the decoder's words", async () => {
    decoder.handle = (_body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "tiny-local", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ error: "CUDA error: out of memory" })}\n\n`);
    };
    const response = await postJson(gateway, "/v1/chat/completions", { model: "local", stream: true, messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect(text).toContain('provider \\"local\\" failed mid-stream: CUDA error: out of memory');
    expect(text).not.toContain("could not reach");
  });
});

// text-generation-inference sends its refusals inside the 200 stream as a message with a type
// beside it. An overload before the first token lets a local-first route fall back, as its HTTP
// form (a 429) does; with no type at all, the same (found by the review of the string form).
describe("an error event of a message and an error_type (text-generation-inference)", () => {
  for (const [what, event] of [
    ["overloaded", { error: "Model is overloaded", error_type: "overloaded" }],
    ["with no type", { error: "something went wrong" }],
  ] as const) {
    it(`before the first token, ${what}: the cloud target answers`, async () => {
      decoder.handle = (_body, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: ${JSON.stringify(event)}\n\n`);
      };
      mocks.openai.enqueue({ kind: "text", text: "rescued" });
      const response = await postJson(gateway, "/v1/chat/completions", { model: "thrifty", stream: true, messages: [{ role: "user", content: "hi there" }] });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("rescued");
    });
  }

  it("a validation error is the request's fault: a 400 with the decoder's words", async () => {
    decoder.handle = (_body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify({ error: "Input validation error: `temperature` must be strictly positive", error_type: "validation" })}\n\n`);
    };
    const response = await postJson(gateway, "/v1/chat/completions", { model: "local", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("Input validation error");
  });
});
