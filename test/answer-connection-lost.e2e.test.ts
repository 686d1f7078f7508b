import { describe, expect, it } from "vitest";
import { postJson } from "./support/gateway.ts";
import { useDecoderRig, waitForRecord } from "./support/decoder-rig.ts";

// An answer not streamed whose connection is lost after the decoder sent its 200 and part of the
// JSON (a reset, a proxy dropping the socket): the decoder took the call and ran it, so it is
// billed (the prompt, as counted; flagged estimated), as a stream cut after it began is. Was: read
// as "could not reach provider", the call cost $0 and the client was told it was unreachable.
//
// The test config prices the decoder at $2 per GPU hour, 5,000 prompt tokens per second.

const rig = useDecoderRig((base) => ({ ...base, routes: { ...base.routes, local: { targets: [{ provider: "local", model: "tiny-local" }], budget: { usd: 10, window: "day" } } } }));

describe("an answer not streamed, its connection lost after the headers", () => {
  it("is billed for its prompt and says the connection was lost", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel');
      setTimeout(() => response.socket!.destroy(), 30);
    };
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "Write a long story about a lighthouse." }] });
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toContain('provider "local" lost the connection before the answer was complete');
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ status: record.status, estimated: record.estimated }).toEqual({ status: "error", estimated: true });
    expect(record.usage.inputTokens).toBeGreaterThan(0);
    expect(record.cost.totalNano).toBeGreaterThan(0);
  });

  it("a decoder that refuses the connection outright is still not billed (so the test above can fail)", async () => {
    rig.decoder.handle = (_body, response) => void response.socket!.destroy();
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.cost.totalNano).toBe(0);
  });
});
