import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";

// A local decoder that takes the request and sends nothing, not even its headers. Inside the
// gateway the openai-compatible adapter keeps no timer of its own (boundedByCaller): the
// router's deadline alone must cut the call at the provider's timeoutMs, for answers and streams
// alike, close the decoder's connection, and leave a record.

const TIMEOUT_MS = 300;
let decoder: FakeDecoder;
let gateway: TestGateway;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  decoder.handle = () => {}; // never answers
  const base = testConfig(decoder.baseUrl);
  const local = { ...base.providers.local!, timeoutMs: TIMEOUT_MS };
  gateway = await startTestGateway({ ...base, providers: { ...base.providers, local } }, "undici");
});
afterAll(async () => {
  await gateway?.close();
  await decoder?.close();
});

describe("a local decoder that never sends its response headers", () => {
  for (const stream of [false, true]) {
    it(`is cut at its timeoutMs with a 504 in the client's dialect (${stream ? "streamed" : "not streamed"})`, async () => {
      const startedAt = performance.now();
      const response = await postJson(gateway, "/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }], stream });
      const waitedMs = performance.now() - startedAt;
      expect(response.status).toBe(504);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error.message).toContain(`within ${TIMEOUT_MS} ms`);
      expect(waitedMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      // The decoder's connection is closed: it stops working on an answer nobody waits for.
      await expect.poll(() => decoder.lastClosedEarly()).toBe(true);
      const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
      expect(record.status).toBe("error");
      expect(record.errorType).toBe("timeout");
    });
  }
});
