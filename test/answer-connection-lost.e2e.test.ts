import { describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { postJson } from "./support/gateway.ts";
import { useDecoderRig, waitForRecord } from "./support/decoder-rig.ts";

// An answer not streamed whose connection is lost after the provider sent its 200 and part of the
// JSON (a reset, a proxy dropping the socket): the provider took the call and ran it, so it is
// billed (the prompt, as counted; flagged estimated), as a stream cut after it began is. Was: read
// as "could not reach provider", the call cost $0 and the client was told it was unreachable.
// A node:http stand-in answers for a local decoder, for OpenAI and for Anthropic, so the reset
// is a real one, read by each adapter (undici; the openai SDK; the Anthropic SDK).

const rig = useDecoderRig((base) => ({
  ...base,
  providers: {
    ...base.providers,
    "openai-here": { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, baseUrl: base.providers.local!.baseUrl },
    // The SDK sends a call again after a connection error: a cut answer must not be one.
    "openai-retrying": { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, baseUrl: base.providers.local!.baseUrl, maxRetries: 1 },
    "local-quick": { ...base.providers.local!, timeoutMs: 500 },
    "anthropic-here": { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" }, baseUrl: base.providers.local!.baseUrl.replace(/\/v1$/, "") },
  },
  routes: {
    ...base.routes,
    "gpt-here": { targets: [{ provider: "openai-here", model: "gpt-4o" }] },
    "claude-here": { targets: [{ provider: "anthropic-here", model: "claude-sonnet-4-6" }] },
    "gpt-retrying": { targets: [{ provider: "openai-retrying", model: "gpt-4o" }] },
    "local-quick": { targets: [{ provider: "local-quick", model: "tiny-local" }] },
  },
}));

/** The 200 and the first bytes of the answer's JSON, then a reset. */
function headersThenReset(_body: Record<string, unknown>, response: ServerResponse) {
  response.writeHead(200, { "content-type": "application/json" });
  response.write('{"id":"answer-1","choices":[{"index":0,"message":{"role":"assistant","content":"Hel');
  setTimeout(() => response.socket!.destroy(), 30);
}

describe("an answer not streamed, its connection lost after the headers", () => {
  it.each([
    ["local", "/v1/chat/completions"],
    ["gpt-here", "/v1/chat/completions"],
    ["claude-here", "/v1/messages"],
    ["gpt-retrying", "/v1/chat/completions"],
  ])("%s: billed for its prompt, and the client is told the connection was lost", async (route, path) => {
    rig.decoder.handle = headersThenReset;
    const calls = rig.decoder.requests.length;
    const response = await postJson(rig.gateway, path, { model: route, max_tokens: 100, messages: [{ role: "user", content: "Write a long story about a lighthouse." }] });
    expect(response.status).toBe(502);
    // One call, not sent again by the SDK as if it had never reached the provider (was: with
    // maxRetries 1, a second call answered and the first, cut one was billed nowhere).
    expect(rig.decoder.requests.length - calls).toBe(1);
    expect(JSON.stringify(await response.json())).toContain("lost the connection before the answer was complete");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ status: record.status, estimated: record.estimated }).toEqual({ status: "error", estimated: true });
    expect(record.usage.inputTokens).toBeGreaterThan(0);
    expect(record.cost.totalNano).toBeGreaterThan(0);
  });

  it("cut by its deadline while its body was still coming: billed, as a stream cut by its deadline after it began is", async () => {
    rig.decoder.handle = (_body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"id":"answer-1","choices":[{"index":0,"message":{"role":"assistant","content":"Hel'); // …then nothing
    };
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local-quick", messages: [{ role: "user", content: "Write a long story." }] });
    expect(response.status).toBe(504);
    expect((await response.json()).error.message).toBe('provider "local-quick" did not finish its answer within 500 ms');
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ status: record.status, estimated: record.estimated }).toEqual({ status: "error", estimated: true });
    expect(record.cost.totalNano).toBeGreaterThan(0);
  });

  it("a provider that drops the connection before any answer is not billed (so the tests above can fail)", async () => {
    rig.decoder.handle = (_body, response) => void response.socket!.destroy();
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.cost.totalNano).toBe(0);
  });
});
