import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { mapProviderError } from "../../adapters/shared/map-provider-error.ts";
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
});
