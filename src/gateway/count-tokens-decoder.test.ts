import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { buildGateway } from "./create-gateway.ts";
import { NO_COUNT_RETRY_MS } from "../model/count-endpoint-memory.ts";
import { sendJson, startFakeDecoder, type FakeDecoder } from "../../test/support/fake-decoder.ts";

// A local decoder that renders and tokenizes a prompt (llama-server's /apply-template and
// /tokenize) counts with its own template and tokenizer: test/local-decoder.e2e.test.ts runs the
// real one. One without them (404) is counted by tollgate instead, and not asked again for
// NO_COUNT_RETRY_MS.

let decoder: FakeDecoder;
let clock = Date.parse("2026-11-24T12:00:00Z");
let gateway: ReturnType<typeof buildGateway>;

beforeAll(async () => {
  decoder = await startFakeDecoder();
  const config = resolveConfig(
    {
      providers: { gpu: { type: "openai-compatible", baseUrl: decoder.baseUrl } },
      routes: { local: { targets: [{ provider: "gpu", model: "qwen3-8b" }] } },
      keys: [{ id: "app", team: "search", hash: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" }],
    },
    {},
  );
  gateway = buildGateway({ config, log: () => {}, now: () => clock });
});
afterAll(() => decoder.close());

/** What llama-server answers: a rendered prompt, and its 66 tokens. */
const llamaServer: FakeDecoder["handle"] = (body, response) =>
  sendJson(response, JSON.stringify("content" in body ? { tokens: Array.from({ length: 66 }, (_, i) => i) } : { prompt: "<|im_start|>…" }));

const count = () =>
  gateway.app.fetch(
    new Request("http://gateway/v1/messages/count_tokens", {
      method: "POST",
      headers: { "x-api-key": "test", "content-type": "application/json" },
      body: JSON.stringify({ model: "local", system: "Be brief.", messages: [{ role: "user", content: "how many tokens is this" }] }),
    }),
  );

describe("count_tokens on a local decoder", () => {
  it("has the decoder render the chat body with its template, tokenizes that, and answers the count", async () => {
    decoder.handle = llamaServer;
    const asked = decoder.paths.length;
    const response = await count();
    expect(await response.json()).toEqual({ input_tokens: 66 });
    expect(response.headers.get("x-tollgate-estimated")).toBeNull();
    expect(decoder.paths.slice(asked)).toEqual(["/apply-template", "/tokenize"]);
    // The body a chat request sends, system prompt as its own message.
    expect(decoder.requests.at(-2)).toMatchObject({
      model: "qwen3-8b",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "how many tokens is this" },
      ],
    });
    expect(decoder.requests.at(-1)).toEqual({ content: "<|im_start|>…", add_special: true, parse_special: true });
  });

  // A prompt with images is estimated without asking the decoder; that says nothing of its
  // endpoint. It was taken for a missing one, and every count for 10 minutes was estimated.
  it("estimates a prompt with images without asking, and still asks the decoder for the next one", async () => {
    decoder.handle = llamaServer;
    const asked = decoder.paths.length;
    const withImage = await gateway.app.fetch(
      new Request("http://gateway/v1/messages/count_tokens", {
        method: "POST",
        headers: { "x-api-key": "test", "content-type": "application/json" },
        body: JSON.stringify({
          model: "local",
          messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }, { type: "text", text: "what is this?" }] }],
        }),
      }),
    );
    expect(withImage.headers.get("x-tollgate-estimated")).toBe("true");
    expect(decoder.paths.length).toBe(asked);
    expect(await (await count()).json()).toEqual({ input_tokens: 66 });
    expect(decoder.paths.length).toBe(asked + 2);
  });

  it("counts for itself where the decoder has no such endpoint, and asks again only after a while", async () => {
    decoder.handle = (_body, response) => {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ detail: "Not Found" }));
    };
    const asked = decoder.paths.length;
    const first = await count();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-tollgate-estimated")).toBe("true");
    expect(((await first.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(decoder.paths.length).toBe(asked + 1);

    clock += NO_COUNT_RETRY_MS - 1;
    expect((await count()).headers.get("x-tollgate-estimated")).toBe("true");
    expect(decoder.paths.length).toBe(asked + 1);

    clock += 1;
    decoder.handle = llamaServer;
    expect(await (await count()).json()).toEqual({ input_tokens: 66 });
    expect(decoder.paths.length).toBe(asked + 3);
  });

  it("passes a decoder's failure on, in Anthropic's shape: it is down or busy, as a chat would find it", async () => {
    clock += NO_COUNT_RETRY_MS;
    decoder.handle = (_body, response) => {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { code: 503, message: "Loading model", type: "unavailable_error" } }));
    };
    const response = await count();
    expect(response.status).toBeGreaterThanOrEqual(500);
    const body = (await response.json()) as { type: string; error: { message: string } };
    expect(body.type).toBe("error");
    expect(body.error.message).toMatch(/Loading model/);
  });

  it.each([
    ["a proxy's 401 for a path it does not know", 401, "application/json", JSON.stringify({ error: "unauthorized" })],
    ["a page that is not JSON", 200, "text/html", "<html><body>Welcome</body></html>"],
  ])("counts for itself on %s", async (_what, status, type, text) => {
    clock += NO_COUNT_RETRY_MS;
    decoder.handle = (_body, response) => {
      response.writeHead(status, { "content-type": type });
      response.end(text);
    };
    const response = await count();
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-estimated")).toBe("true");
  });
});
