import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completion, sendJson, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { postJson, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";

// A local decoder fetches an image URL itself (vLLM does), from inside the network it runs in, so
// a client could make it reach internal addresses through tollgate (PRODUCT.md: no SSRF). By
// default a request with an image URL is refused for an openai-compatible provider: the route
// tries its next target, and a route with none answers 400 saying how to send the image instead.
// `imageUrls: "pass"` on the provider lets the decoder fetch them. Was: every URL went on.

const INTERNAL = "http://169.254.169.254/latest/meta-data/iam/security-credentials/";
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let decoder: FakeDecoder;
let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  decoder.handle = (_body, response) => sendJson(response, completion("c", { content: "seen" }, "stop", { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
  mocks = startMockProviders();
  const base = testConfig(decoder.baseUrl);
  gateway = await startTestGateway({
    ...base,
    providers: { ...base.providers, trusting: { ...base.providers.local, imageUrls: "pass" } },
    routes: {
      ...base.routes,
      "local-then-gpt": { targets: [{ provider: "local", model: "tiny-local" }, { provider: "openai", model: "gpt-4o" }] },
      trusting: { targets: [{ provider: "trusting", model: "tiny-local" }] },
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
  await decoder?.close();
});

const withImage = (model: string, url: string) => ({ model, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url } }] }] });

describe("image URLs and local decoders", () => {
  it("alone on its route, a decoder is not sent an image URL: 400 saying what to do", async () => {
    const before = decoder.requests.length;
    const response = await postJson(gateway, "/v1/chat/completions", withImage("local", INTERNAL));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      param: "messages",
      message: 'provider "local" would fetch this image URL itself, from inside its network: send the image inline (a data: URL or base64), or set providers.local.imageUrls to "pass" to let it fetch URLs',
    });
    expect(decoder.requests.length).toBe(before);
  });

  it("with a cloud target after it, the cloud answers (it fetches URLs on its own network)", async () => {
    const before = decoder.requests.length;
    mocks.openai.enqueue({ kind: "text", text: "a cat" });
    const response = await postJson(gateway, "/v1/chat/completions", withImage("local-then-gpt", "https://example.com/cat.png"));
    expect({ status: response.status, provider: response.headers.get("x-tollgate-provider") }).toEqual({ status: 200, provider: "openai" });
    expect(decoder.requests.length).toBe(before);
  });

  it("an inline image goes to the decoder as it is", async () => {
    const response = await postJson(gateway, "/v1/chat/completions", withImage("local", PIXEL));
    expect(response.status).toBe(200);
    expect(JSON.stringify(decoder.requests.at(-1))).toContain(PIXEL);
  });

  it('a provider with imageUrls "pass" is sent the URL', async () => {
    const response = await postJson(gateway, "/v1/chat/completions", withImage("trusting", "https://example.com/cat.png"));
    expect(response.status).toBe(200);
    expect(JSON.stringify(decoder.requests.at(-1))).toContain("https://example.com/cat.png");
  });
});
