import type { GatewayError } from "../errors/gateway-error.ts";
import type { ChatRequest } from "./chat-request.ts";
import type { ChatResponse } from "./chat-response.ts";
import type { StreamPart } from "./stream-part.ts";

export type ProviderType = "openai" | "anthropic" | "openai-compatible";

/**
 * What an adapter gives the router: one provider, any model on it. `stream` never throws: a
 * failure, before or after the first token, arrives as an `error` part.
 */
export interface ChatModel {
  readonly providerName: string;
  readonly providerType: ProviderType;
  /** Where calls go (the configured URL, or the SDK's default): telemetry's server.address. */
  readonly baseUrl: string;
  /**
   * What this provider must not be sent, checked at the route's per-target step: a refusal (a
   * 400) lets the route try its next target, and is the client's answer if none takes it.
   */
  refuse?(request: ChatRequest): GatewayError | undefined;
  /** `headers`: what the call carries besides the adapter's own (trace context: UpstreamHeaders). */
  generate(request: ChatRequest, model: string, signal: AbortSignal, headers?: UpstreamHeaders): Promise<ChatResponse>;
  stream(request: ChatRequest, model: string, signal: AbortSignal, headers?: UpstreamHeaders): AsyncGenerator<StreamPart>;
  /**
   * The provider's own count of the input tokens `request` would cost on `model` (Anthropic's
   * count_tokens, which is free; llama-server renders and tokenizes the prompt). Absent, or
   * answering NotCounted, where it cannot: tollgate then counts for itself.
   */
  countTokens?(request: ChatRequest, model: string, signal: AbortSignal, headers?: UpstreamHeaders): Promise<number | CountedWithEdits | NotCounted>;
}

/**
 * A count after Anthropic's context editing, with what it said of the editing
 * (`context_management: {original_input_tokens}`, the count before it), passed on to the client.
 */
export type CountedWithEdits = { inputTokens: number; contextManagement: Record<string, unknown> };

/**
 * Why a provider gave no count: it has no count endpoint ("no-endpoint", found by asking), or it
 * cannot count this request (a prompt with images, for a decoder's text tokenizer), asked nothing.
 */
export type NotCounted = "no-endpoint" | "not-this-request";

/**
 * Headers for one upstream call besides the adapter's own: the W3C trace context of the call's
 * span (`traceparent`, `tracestate`), so that a decoder that traces (vLLM, SGLang) continues the
 * gateway's trace. Never the client's headers (what a client may switch on with one, Anthropic's
 * `anthropic-beta`, travels on the request: ChatRequest.anthropicBetas).
 */
export type UpstreamHeaders = Record<string, string>;

/** How adapters reach the network; the Node entry passes a keep-alive undici dispatcher here. */
export type TransportOptions = {
  fetch?: typeof fetch;
  /** Extra fetch options for every upstream call; in practice `{ dispatcher }` (undici). */
  fetchOptions?: { dispatcher?: unknown };
  /**
   * A plain HTTP POST without WHATWG objects, for adapters that need no SDK. The Node entry
   * gives undici.request; elsewhere those adapters fall back to `fetch`.
   */
  post?: PlainPost;
};

export type PlainPost = (url: string, init: { headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<PlainResponse>;

export type PlainResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body's first MAX_ERROR_BODY_BYTES (adapters/shared/body-bound.ts), as text: a refusal's, for its message. */
  text(): Promise<string>;
  /** The body parsed, failing with BodyTooLongError past MAX_ANSWER_BYTES (the body then destroyed, not drained). */
  json(): Promise<unknown>;
  /** The body as it arrives; leaving the iteration early stops the download. */
  body: AsyncIterable<Uint8Array>;
};
