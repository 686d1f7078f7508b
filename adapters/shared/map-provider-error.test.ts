import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { isNetworkFailure, mapProviderError, MAX_PROVIDER_MESSAGE_CHARACTERS } from "../../adapters/shared/map-provider-error.ts";
import { ProviderHttpError } from "../openai-compatible/post-chat-completions.ts";
import { renderOpenAIError } from "../../src/dialects/openai/render-openai-error.ts";

// OpenAI error bodies as the SDK builds them (APIError.generate, node_modules/openai/core/error.js).
// REFERENCE.md: OpenAI answers a too-long prompt with 400 code "context_length_exceeded"; clients
// (agents that trim history) branch on that code.

const context = { provider: "openai", apiKey: "sk-test-openai", keyVariable: "OPENAI_API_KEY" };

describe("OpenAI provider errors through tollgate", () => {
  it("400 context_length_exceeded keeps its code for an OpenAI client", () => {
    const error = APIError.generate(400, { error: { message: "This model's maximum context length is 128000 tokens.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } }, undefined, new Headers());
    expect(renderOpenAIError(mapProviderError(error, context)).error.code).toBe("context_length_exceeded");
  });

  // Local decoders say it their own way, with the HTTP status as `code`; clients get OpenAI's code.
  it.each([
    ["vLLM", { error: { message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", type: "BadRequestError", param: null, code: 400 } }],
    ["llama-server", { error: { code: 400, message: "request (4822 tokens) exceeds the available context size (512 tokens), try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 4822, n_ctx: 512 } }],
  ])("a %s context overflow becomes 400 context_length_exceeded", (_decoder, body) => {
    const error = new ProviderHttpError(400, new Headers(), body);
    const mapped = renderOpenAIError(mapProviderError(error, { provider: "gpu" })).error;
    expect(mapped).toMatchObject({ code: "context_length_exceeded", type: "invalid_request_error" });
  });
});

// A refusal whose body is not JSON (a proxy's HTML error page) reaches the adapter through the
// SDKs as the whole text, up to the 1 MiB that is read of it. Was: all of it, in the client's
// error and in the log line.
describe("a provider's long message", () => {
  it("is cut, saying how long it was", () => {
    const page = `<html>${"x".repeat(1_000_000)}</html>`;
    const mapped = mapProviderError(APIError.generate(502, undefined, page, new Headers()), context);
    expect(mapped.message.length).toBeLessThan(MAX_PROVIDER_MESSAGE_CHARACTERS + 200);
    expect(mapped.message).toContain(`… (cut: the provider's message ran to `);
    expect(mapped.message.startsWith('provider "openai" failed (HTTP 502): ')).toBe(true);
  });
});

describe("a transport's own message", () => {
  it("goes to the log only, with any URL's user and password taken out", () => {
    // What fetch says of a URL with credentials in it (the config now refuses such a baseUrl).
    const error = new TypeError("Request cannot be constructed from a URL that includes credentials: http://svc-user:Sup3rS3cret@10.0.0.5:8000/v1/chat/completions");
    const mapped = mapProviderError(error, { provider: "local" });
    expect(mapped.message).toBe('could not reach provider "local" (network error)');
    expect(mapped.logDetail).toBe("Request cannot be constructed from a URL that includes credentials: http://[redacted]@10.0.0.5:8000/v1/chat/completions");
  });

  // Was: `could not reach provider "local": connect ECONNREFUSED 10.0.0.5:8000` in the client's
  // 502, an internal address handed to whoever sent the request.
  it.each([
    ["ECONNREFUSED", "connect ECONNREFUSED 10.0.0.5:8000", "connection refused"],
    ["ENOTFOUND", "getaddrinfo ENOTFOUND gpu-3.internal", "host not found"],
  ])("%s: the client learns the kind of failure, not the address", (code, text, kind) => {
    const cause = Object.assign(new Error(text), { code });
    const error = new TypeError("fetch failed", { cause });
    const mapped = mapProviderError(error, { provider: "local" });
    expect(mapped.message).toBe(`could not reach provider "local" (${kind})`);
    expect(mapped.logDetail).toBe(`fetch failed: ${text}`);
  });
});

describe("a provider quoting tollgate's own key", () => {
  it("in its error code or param: they are dropped, as they would pass to the client, the record's errorType and the spans", () => {
    const error = APIError.generate(400, { error: { message: "bad key sk-test-openai", type: "invalid_request_error", param: "sk-test-openai", code: "sk-test-openai" } }, undefined, new Headers());
    const mapped = mapProviderError(error, context);
    expect(mapped.code).toBeUndefined();
    expect(mapped.param).toBeUndefined();
    expect(mapped.message).toBe('provider "openai" rejected the request: bad key [redacted]');
  });

  it("shorter than 8 characters (a decoder started with --api-key hunter2), quoted as a credential: still redacted", () => {
    const error = new ProviderHttpError(400, new Headers(), { error: { message: "Header 'Authorization: Bearer hunter2' is malformed", type: "invalid_request_error" } });
    expect(mapProviderError(error, { provider: "local", apiKey: "hunter2" }).message).toBe("provider \"local\" rejected the request: Header 'Authorization: Bearer [redacted]' is malformed");
  });

  it("in a proxy's HTML page longer than the 500 characters kept: redacted before the cut, so no part of it is left", async () => {
    const key = "zq8-local-decoder-key";
    // The key starts at character 497: a cut at 500 leaves "zq8" of it.
    const page = `<html><body>${"x".repeat(470)} Authorization ${key} refused</body></html>`;
    const server = (await import("node:http")).createServer((_, response) => response.writeHead(502, { "content-type": "text/html" }).end(page));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { postChatCompletions } = await import("../openai-compatible/post-chat-completions.ts");
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/chat/completions`;
      const error = await postChatCompletions({ url, apiKey: key, body: {}, signal: new AbortController().signal, timeoutMs: undefined, transport: {} }).then(() => undefined, (thrown: unknown) => thrown);
      const mapped = mapProviderError(error, { provider: "local", apiKey: key });
      expect(mapped.message).not.toMatch(/zq8/);
      // The cut now falls inside "[redacted]".
      expect(mapped.message).toMatch(/ Authorization \[re$/);
    } finally {
      server.close();
    }
  });
});

// Azure OpenAI says when to retry only in `retry-after-ms`, which both SDKs read first; it was
// dropped, so the client fell back to its own backoff (found by review).
describe("a 429's retry-after", () => {
  const limited = (headers: Record<string, string>) => APIError.generate(429, { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }, undefined, new Headers(headers));

  it("is read from retry-after-ms, rounded up to whole seconds", () => {
    expect(mapProviderError(limited({ "retry-after-ms": "1500" }), context).retryAfterSeconds).toBe(2);
  });

  it("is read from retry-after where that is all there is, in seconds or as a date", () => {
    expect(mapProviderError(limited({ "retry-after": "7" }), context).retryAfterSeconds).toBe(7);
    expect(mapProviderError(limited({ "retry-after": new Date(Date.now() + 30_500).toUTCString() }), context).retryAfterSeconds).toBeGreaterThanOrEqual(30);
  });
});

describe("isNetworkFailure", () => {
  // A stream that fails this way after it began is billed as a call the provider took
  // (finish-check.ts); a throw of tollgate's own while reading it must not be.
  it("is true for a lost connection as undici and the SDKs report it", () => {
    expect(isNetworkFailure(new TypeError("terminated", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) }))).toBe(true);
    expect(isNetworkFailure(new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) }))).toBe(true);
    expect(isNetworkFailure(Object.assign(new Error("Connection error."), { name: "APIConnectionError" }))).toBe(true);
  });

  it("is true for a lost connection as workerd reports it (a plain Error, cloudflare/workerd#7195)", () => {
    // Was false: on Workers a stream cut after it began read as "could not reach", at $0.
    expect(isNetworkFailure(new Error("Network connection lost."))).toBe(true);
    expect(isNetworkFailure(new TypeError("Network connection lost"))).toBe(true);
  });

  it("is false for anything else without a status: a bug reading the stream, a parse error, a timeout", () => {
    expect(isNetworkFailure(new TypeError("Cannot read properties of undefined (reading 'delta')"))).toBe(false);
    expect(isNetworkFailure(new SyntaxError("Unexpected token < in JSON at position 0"))).toBe(false);
    expect(isNetworkFailure(Object.assign(new Error("Request timed out."), { name: "APIConnectionTimeoutError" }))).toBe(false);
  });
});
