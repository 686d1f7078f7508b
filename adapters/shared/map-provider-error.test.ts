import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { mapProviderError } from "../../adapters/shared/map-provider-error.ts";
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

describe("a transport's own message, passed to the client", () => {
  it("has any URL's user and password taken out", () => {
    // What fetch says of a URL with credentials in it (the config now refuses such a baseUrl).
    const error = new TypeError("Request cannot be constructed from a URL that includes credentials: http://svc-user:Sup3rS3cret@10.0.0.5:8000/v1/chat/completions");
    const mapped = mapProviderError(error, { provider: "local" });
    expect(mapped.message).toBe('could not reach provider "local": Request cannot be constructed from a URL that includes credentials: http://[redacted]@10.0.0.5:8000/v1/chat/completions');
  });
});
