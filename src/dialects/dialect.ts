import type { GatewayError } from "../errors/gateway-error.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { AnthropicStreamRenderer } from "./anthropic/render-anthropic-stream.ts";
import { parseAnthropicRequest, withAnthropicBetas } from "./anthropic/parse-anthropic-request.ts";
import { renderAnthropicError } from "./anthropic/render-anthropic-error.ts";
import { renderAnthropicResponse } from "./anthropic/render-anthropic-response.ts";
import { OpenAIStreamRenderer } from "./openai/render-openai-stream.ts";
import { parseOpenAIRequest } from "./openai/parse-openai-request.ts";
import { renderOpenAIError } from "./openai/render-openai-error.ts";
import { renderOpenAIResponse } from "./openai/render-openai-response.ts";
import type { StreamSummary } from "./stream-summary.ts";

/** A client API tollgate speaks: how to read its requests and how to write everything back. */
export interface Dialect {
  readonly name: "openai" | "anthropic";
  /** `headers`: the request's, for what a dialect carries there (Anthropic's `anthropic-beta`). */
  parseRequest(body: unknown, headers: Headers): ChatRequest;
  renderResponse(response: ChatResponse): unknown;
  /** `requestId`: the answer's, for dialects whose error bodies carry it (Anthropic's). */
  renderError(error: GatewayError, requestId?: string): unknown;
  createStreamRenderer(request: ChatRequest): StreamRenderer;
}

export interface StreamRenderer {
  render(part: StreamPart): string;
  /**
   * Closes a stream with tollgate's summary where the SDKs do not read: after the dialect's
   * closing events where it ended normally, alone after `error`'s event where it failed.
   */
  end(summary: StreamSummary): string;
  /** The error event that fails a stream in the dialect; only `end`'s summary may follow it. */
  error(error: GatewayError): string;
  /** Bytes that keep a quiet stream's connection open and that the dialect's SDK skips. */
  keepAlive(): string;
}

export const openAIDialect: Dialect = {
  name: "openai",
  parseRequest: parseOpenAIRequest,
  renderResponse: renderOpenAIResponse,
  renderError: renderOpenAIError,
  createStreamRenderer: (request) => new OpenAIStreamRenderer(request.streamUsage),
};

export const anthropicDialect: Dialect = {
  name: "anthropic",
  parseRequest: (body, headers) => withAnthropicBetas(parseAnthropicRequest(body), headers),
  renderResponse: renderAnthropicResponse,
  renderError: renderAnthropicError,
  createStreamRenderer: () => new AnthropicStreamRenderer(),
};
