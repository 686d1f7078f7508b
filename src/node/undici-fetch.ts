import type { Readable } from "node:stream";
import { request, type Dispatcher } from "undici";
import { AnswerCutError } from "../../adapters/shared/finish-check.ts";
import type { PlainPost } from "../model/chat-model.ts";

// A `fetch` for the provider SDKs built on undici.request. Node 20's global fetch spends about
// 400 µs of CPU per call on WHATWG machinery (measured: 608 µs per sequential call against 201 µs
// for undici.request on the same keep-alive pool); this keeps the SDKs but drops that cost.
// It supports what the SDKs send — string or byte bodies, a Headers object, an AbortSignal — and
// hands anything else to the global fetch.

/** undici.request as a PlainPost: a status, a header record and a Node body, nothing else built. */
export function createUndiciPost(dispatcher: Dispatcher): PlainPost {
  return async function undiciPost(url, { headers, body, signal }) {
    const response = await request(url, { method: "POST", headers, body, signal, dispatcher });
    return {
      status: response.statusCode,
      headers: response.headers,
      text: () => response.body.text(),
      json: () => response.body.json(),
      body: readWithoutDestroying(response.body),
    };
  };
}

/** How long the rest of a body that its reader left early may take to arrive before it is cut off. */
const DRAIN_MS = 1_000;

/**
 * The body's chunks. A reader that stops early — an SSE reader stops at `data: [DONE]`, which
 * comes just before the body's end — does not destroy the body: destroying one whose end has not
 * been read yet builds two errors with stack traces (Node's AbortError, then undici's
 * RequestAbortedError), about 5% of a streamed request's CPU profile in the benchmark. The rest is read
 * and dropped instead, so the connection goes back to the pool; a body still going after
 * DRAIN_MS is cut off. A reader that throws into the body instead destroys it at once.
 */
async function* readWithoutDestroying(body: Readable): AsyncGenerator<Uint8Array> {
  let complete = false;
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false })) {
      try {
        yield chunk as Uint8Array;
      } catch (error) {
        // The reader failed the body (an event past the bound, event-bound.ts): its upstream may
        // be sending without end, so the connection goes now, not after a drain.
        body.on("error", () => undefined);
        body.destroy();
        throw error;
      }
    }
    complete = true;
  } finally {
    if (!complete && !body.destroyed) {
      const cutOff = setTimeout(() => body.destroy(), DRAIN_MS).unref();
      // Nobody reads this body any more: a reset or the cut-off must not become an unhandled 'error'.
      body.on("error", () => undefined);
      body.once("close", () => clearTimeout(cutOff)).resume();
    }
  }
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function createUndiciFetch(dispatcher: Dispatcher): typeof fetch {
  return async function undiciFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== "string" && !(body instanceof Uint8Array))) {
      return fetch(input, init);
    }
    const url = input instanceof URL ? input.href : input;
    const upstream = await request(url, {
      method: (init.method ?? "GET") as Dispatcher.HttpMethod,
      headers: headersToRecord(init.headers),
      body: body ?? null,
      signal: init.signal ?? undefined,
      dispatcher,
    });

    const headers = new Headers();
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else if (value !== undefined) headers.set(name, value);
    }
    const init200 = { status: upstream.statusCode, headers };
    if (NULL_BODY_STATUSES.has(upstream.statusCode)) {
      upstream.body.resume();
      return new Response(null, init200);
    }
    // Streams stay streams (SSE); everything else is read whole.
    if (headers.get("content-type")?.startsWith("text/event-stream")) return new Response(toWebStream(upstream.body), init200);
    let bytes: ArrayBuffer;
    try {
      bytes = await upstream.body.arrayBuffer();
    } catch (error) {
      // The connection was lost after the headers. Thrown here, an SDK would take it for a call
      // that never reached the provider, and send it again (maxRetries); an answer the provider
      // had taken is handed back instead, its body failing with AnswerCutError, which the adapter
      // bills. A refusal (4xx/5xx) cut short is a failed call as before.
      if (upstream.statusCode >= 300) throw error;
      return new BufferedResponse(new AnswerCutError(error), upstream.statusCode, headers, url) as unknown as Response;
    }
    return new BufferedResponse(new Uint8Array(bytes), upstream.statusCode, headers, url) as unknown as Response;
  };
}

const decoder = new TextDecoder();

/**
 * A read-whole answer with the part of Response that the SDKs use (ok, status, url, headers,
 * text, json; `body` for their debug log). A WHATWG Response would build a byte stream for a
 * body that is already in memory: about 8% of the gateway's CPU in the benchmark. The SDK
 * tests in undici-fetch.test.ts hold both SDKs to this surface. A body cut off after the
 * headers is an AnswerCutError, which every read of it throws.
 */
class BufferedResponse {
  readonly ok: boolean;
  readonly statusText = "";
  readonly redirected = false;
  readonly type = "basic";
  bodyUsed = false;

  constructor(
    private readonly bytes: Uint8Array | AnswerCutError,
    readonly status: number,
    readonly headers: Headers,
    readonly url: string,
  ) {
    this.ok = status >= 200 && status < 300;
  }

  get body(): ReadableStream<Uint8Array> {
    const bytes = this.bytes;
    if (bytes instanceof AnswerCutError) return new ReadableStream({ start: (controller) => controller.error(bytes) });
    return new Response(bytes as Uint8Array<ArrayBuffer>).body!;
  }

  async text(): Promise<string> {
    return decoder.decode(this.read());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.read().slice().buffer;
  }

  private read(): Uint8Array {
    this.bodyUsed = true;
    if (this.bytes instanceof AnswerCutError) throw this.bytes;
    return this.bytes;
  }

  clone(): BufferedResponse {
    return new BufferedResponse(this.bytes, this.status, this.headers, this.url);
  }
}

function headersToRecord(headers: HeadersInit | undefined): Record<string, string> {
  if (!headers) return {};
  const record: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((value, name) => (record[name] = value));
  else if (Array.isArray(headers)) for (const [name, value] of headers) record[name!.toLowerCase()] = value!;
  else for (const [name, value] of Object.entries(headers)) record[name.toLowerCase()] = value;
  return record;
}

/**
 * Pull-based, so the upstream socket is read only as fast as the SDK reads (Readable.toWeb on
 * undici's body throws "Controller is already closed" on Node 20 when the reader cancels).
 */
function toWebStream(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value as Uint8Array);
      },
      cancel(reason) {
        body.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
