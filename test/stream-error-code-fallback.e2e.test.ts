import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeDecoder, chunk, type FakeDecoder } from "./support/fake-decoder.ts";
import { startTestGateway, postJson, sha256, APP_KEY, type TestGateway } from "./support/gateway.ts";

// vLLM reports an engine failure inside a 200 stream as
//   data: {"error": {"message": ..., "type": "InternalServerError", "param": null, "code": 500}}
// (vllm/entrypoints/openai/engine/serving.py create_streaming_error_response; GenerationError ->
// InternalServerError / 500). Before the first answer token that is a server failure the route's
// next target can make good, exactly like llama-server's {"type": "server_error", "code": 500}.
// Was: only the type names were read, so "InternalServerError" was final (502, no fallback).

let vllm: FakeDecoder;
let live: FakeDecoder;
let gateway: TestGateway;
const pricing = { default: { inputPerMillion: 1, outputPerMillion: 4 } };

beforeAll(async () => {
  vllm = await startFakeDecoder();
  vllm.handle = (_body, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(chunk("v1", { role: "assistant", content: "" }));
    response.end(`data: ${JSON.stringify({ error: { message: "Internal server error", type: "InternalServerError", param: null, code: 500 } })}\n\n`);
  };
  live = await startFakeDecoder();
  live.handle = (_body, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(chunk("c1", { role: "assistant", content: "" }));
    response.write(chunk("c1", { content: "rescued" }));
    response.write(chunk("c1", {}, "stop"));
    response.end("data: [DONE]\n\n");
  };
  const config = {
    providers: {
      vllm: { type: "openai-compatible", baseUrl: vllm.baseUrl, pricing },
      live: { type: "openai-compatible", baseUrl: live.baseUrl, pricing },
    },
    routes: { r: { targets: [{ provider: "vllm", model: "m" }, { provider: "live", model: "m" }] } },
    keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
  };
  gateway = await startTestGateway(config, "undici");
});
afterAll(async () => {
  await gateway.close();
  await vllm.close();
  await live.close();
});

describe("vLLM's in-stream InternalServerError before the first token", () => {
  it("falls back to the route's next target", async () => {
    const response = await postJson(gateway, "/v1/chat/completions", { model: "r", stream: true, messages: [{ role: "user", content: "hi" }] });
    const text = await response.text();
    expect({ status: response.status, liveCalls: live.requests.length }).toEqual({ status: 200, liveCalls: 1 });
    expect(text).toContain("rescued");
  });
});
