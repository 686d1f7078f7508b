import type { TransportOptions } from "../../src/model/chat-model.ts";

// One Chat Completions call over the transport's fetch, without an SDK: local decoders sit a
// millisecond away, so what the gateway spends per call shows, and the official SDK's per-call
// work (header objects, request logging, retries machinery) was the largest share of it.
// A failed HTTP status is thrown in the shape the SDKs throw (status, headers, parsed body), so
// mapProviderError treats every adapter's failures alike.

export type ChatCompletionsCall = {
  url: string;
  apiKey?: string;
  body: unknown;
  signal: AbortSignal;
  timeoutMs: number;
  transport: TransportOptions;
};

export class ProviderHttpError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    /** The parsed error body (`{"error": {...}}`), or its text when it was not JSON. */
    readonly error: unknown,
  ) {
    super(`HTTP ${status}`);
    this.name = "ProviderHttpError";
  }
}

export async function postChatCompletions(call: ChatCompletionsCall): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const doFetch = call.transport.fetch ?? fetch;
  // The client's signal or the provider's timeout, whichever comes first.
  const signal = AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]);
  const response = await doFetch(call.url, {
    method: "POST",
    headers,
    body: JSON.stringify(call.body),
    signal,
    ...(call.transport.fetchOptions ?? {}),
  } as RequestInit);
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text for the message.
  }
  throw new ProviderHttpError(response.status, response.headers, typeof parsed === "string" ? { message: parsed.slice(0, 500) } : parsed);
}
