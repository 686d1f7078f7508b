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

/** What the adapter reads of an answer, from either transport. */
export type ChatCompletionsResponse = { json(): Promise<unknown>; body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> };

export async function postChatCompletions(call: ChatCompletionsCall): Promise<ChatCompletionsResponse> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const timeout = AbortSignal.timeout(call.timeoutMs);
  // The client's signal or the provider's timeout, whichever comes first.
  const signal = AbortSignal.any([call.signal, timeout]);
  const body = JSON.stringify(call.body);
  try {
    if (call.transport.post) {
      const response = await call.transport.post(call.url, { headers, body, signal });
      if (response.status < 400) return response;
      throw new ProviderHttpError(response.status, new Headers(flatHeaders(response.headers)), errorBody(await response.text().catch(() => "")));
    }
    const doFetch = call.transport.fetch ?? fetch;
    const response = await doFetch(call.url, { method: "POST", headers, body, signal, ...(call.transport.fetchOptions ?? {}) } as RequestInit);
    if (response.ok) return { json: () => response.json(), body: response.body! };
    throw new ProviderHttpError(response.status, response.headers, errorBody(await response.text().catch(() => "")));
  } catch (error) {
    // Either transport reports a fired signal as an abort; say which signal it was.
    if (timeout.aborted && !call.signal.aborted) throw Object.assign(new Error(`no answer within ${call.timeoutMs} ms`), { name: "TimeoutError" });
    throw error;
  }
}

function errorBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) };
  }
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): [string, string][] {
  return Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value] as [string, string]]));
}
