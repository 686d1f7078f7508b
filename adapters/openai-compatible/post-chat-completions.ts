import type { TransportOptions } from "../../src/model/chat-model.ts";
import { redactSecrets } from "../shared/redact-secrets.ts";
import { unrefTimer } from "../../src/runtime/unref-timer.ts";
import { chunksOf } from "./read-sse-data.ts";
import { BodyTooLongError, MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES, readUpTo } from "../shared/body-bound.ts";

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
  /**
   * The longest wait for the response headers, as the official SDKs' `timeout` bounds it. The
   * whole answer and a stream's silences are bounded for every adapter alike by the router
   * (src/routing/call-deadlines.ts). Undefined: no timer here, the caller's signal is the only
   * bound (the router's deadline starts earlier with the same limit, so this one could never
   * fire first).
   */
  timeoutMs: number | undefined;
  /** Headers for this call besides its own (the trace context). */
  headers?: Record<string, string>;
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
  // The call's own headers (trace context) first: the adapter's below always win.
  const headers: Record<string, string> = { ...call.headers, "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const deadline = call.timeoutMs === undefined ? undefined : new HeadersDeadline(call.signal, call.timeoutMs);
  const signal = deadline?.signal ?? call.signal;
  const body = JSON.stringify(call.body);
  try {
    if (call.transport.post) {
      const response = await call.transport.post(call.url, { headers, body, signal });
      if (response.status < 400) return deadline ? deadline.endsWith(response) : response;
      throw new ProviderHttpError(response.status, new Headers(flatHeaders(response.headers)), errorBody(await response.text().catch(() => ""), call.apiKey));
    }
    const doFetch = call.transport.fetch ?? fetch;
    const response = await doFetch(call.url, { method: "POST", headers, body, signal, ...(call.transport.fetchOptions ?? {}) } as RequestInit);
    if (response.ok) {
      const answer = { json: () => answerJson(response.body), body: response.body! };
      return deadline ? deadline.endsWith(answer) : answer;
    }
    const refusal = await readUpTo(response.body, MAX_ERROR_BODY_BYTES).catch(() => undefined);
    throw new ProviderHttpError(response.status, response.headers, errorBody(refusal ? decoder.decode(refusal.bytes) : "", call.apiKey));
  } catch (error) {
    deadline?.end();
    // Either transport reports a fired signal as an abort; say which signal it was.
    if (deadline?.timedOut && !call.signal.aborted) throw Object.assign(new Error(`no response headers within ${call.timeoutMs} ms`), { name: "TimeoutError" });
    throw error;
  }
}

/**
 * The client's signal or the headers' deadline, whichever fires first: one controller and one
 * timer; the timer stops when the headers are in, the client's listener once the answer has been
 * read. (AbortSignal.timeout left a 10-minute timer behind every call until a full GC collected
 * its signal, and AbortSignal.any with it cost about 5% of the gateway's CPU in the benchmark.)
 */
class HeadersDeadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  timedOut = false;

  constructor(
    private readonly client: AbortSignal,
    timeoutMs: number,
  ) {
    // The call holds the process open while it runs; the timer alone must not.
    this.timer = unrefTimer(
      setTimeout(() => {
        this.timedOut = true;
        // The reason AbortSignal.timeout gives, so a stream cut mid-way reads as a timeout too.
        this.controller.abort(new DOMException(`no response headers within ${timeoutMs} ms`, "TimeoutError"));
      }, timeoutMs),
    );
    if (client.aborted) this.controller.abort(client.reason);
    else client.addEventListener("abort", this.followClient, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private readonly followClient = () => this.controller.abort(this.client.reason);

  end(): void {
    clearTimeout(this.timer);
    this.client.removeEventListener("abort", this.followClient);
  }

  /**
   * The answer: the headers are in, so the timer stops now; a client that leaves still aborts
   * the body, until it has been read (or abandoned).
   */
  endsWith(response: ChatCompletionsResponse): ChatCompletionsResponse {
    clearTimeout(this.timer);
    const end = () => this.end();
    return {
      json: () => response.json().finally(end),
      body: readThenEnd(response.body, end),
    };
  }
}

async function* readThenEnd(body: ChatCompletionsResponse["body"], end: () => void): AsyncGenerator<Uint8Array> {
  try {
    yield* chunksOf(body);
  } finally {
    end();
  }
}

const decoder = new TextDecoder();

/**
 * An answer's JSON, read up to its bound (body-bound.ts): past it, the body is cancelled (its
 * connection closed) and the read fails with BodyTooLongError, which mapProviderError makes a 502.
 * (The Node transport's `post` bounds its own reads: src/node/undici-fetch.ts.)
 */
async function answerJson(body: ReadableStream<Uint8Array> | null): Promise<unknown> {
  const { bytes, whole } = await readUpTo(body, MAX_ANSWER_BYTES);
  if (!whole) throw new BodyTooLongError(MAX_ANSWER_BYTES);
  return JSON.parse(decoder.decode(bytes));
}

function errorBody(text: string, apiKey: string | undefined): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // A proxy's HTML error page in front of the decoder: its text on one line, in the client's
    // error message and in the log's one line per event. Redacted before it is cut: a key cut
    // in two would no longer be found whole.
    return { message: redactSecrets(text.replace(/\s+/g, " ").trim(), apiKey).slice(0, 500) };
  }
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): [string, string][] {
  return Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value] as [string, string]]));
}
