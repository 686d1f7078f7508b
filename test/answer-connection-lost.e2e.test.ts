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
    "anthropic-here": { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" }, baseUrl: base.providers.local!.baseUrl.replace(/\/v1$/, "") },
  },
  routes: {
    ...base.routes,
    "gpt-here": { targets: [{ provider: "openai-here", model: "gpt-4o" }] },
    "claude-here": { targets: [{ provider: "anthropic-here", model: "claude-sonnet-4-6" }] },
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
  ])("%s: billed for its prompt, and the client is told the connection was lost", async (route, path) => {
    rig.decoder.handle = headersThenReset;
    const response = await postJson(rig.gateway, path, { model: route, max_tokens: 100, messages: [{ role: "user", content: "Write a long story about a lighthouse." }] });
    expect(response.status).toBe(502);
    expect(JSON.stringify(await response.json())).toContain("lost the connection before the answer was complete");
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ status: record.status, estimated: record.estimated }).toEqual({ status: "error", estimated: true });
    expect(record.usage.inputTokens).toBeGreaterThan(0);
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
