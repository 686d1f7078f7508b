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
  generate(request: ChatRequest, model: string, signal: AbortSignal): Promise<ChatResponse>;
  stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncGenerator<StreamPart>;
}

/** How adapters reach the network; the Node entry passes a keep-alive undici dispatcher here. */
export type TransportOptions = {
  fetch?: typeof fetch;
  /** Extra fetch options for every upstream call; in practice `{ dispatcher }` (undici). */
  fetchOptions?: { dispatcher?: unknown };
};
