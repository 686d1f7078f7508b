import type { Readable } from "node:stream";
import { request, type Dispatcher } from "undici";
import { AnswerCutError } from "../../adapters/shared/finish-check.ts";
import { BODY_BOUNDED, BodyTooLongError, MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from "../../adapters/shared/body-bound.ts";
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
      // A refusal's start, for its message; an answer, whole up to its bound (body-bound.ts).
      text: async () => decoder.decode((await readUpTo(response.body, MAX_ERROR_BODY_BYTES)).bytes),
      json: async () => {
        const { bytes, whole } = await readUpTo(response.body, MAX_ANSWER_BYTES);
        if (!whole) throw new BodyTooLongError(MAX_ANSWER_BYTES);
        return JSON.parse(decoder.decode(bytes));
      },
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
    // Streams stay streams (SSE); everything else is read whole, up to its bound (body-bound.ts).
    if (headers.get("content-type")?.startsWith("text/event-stream")) return new Response(toWebStream(upstream.body), init200);
    const refused = upstream.statusCode >= 300;
    let read: { bytes: Uint8Array; whole: boolean };
    try {
      read = await readUpTo(upstream.body, refused ? MAX_ERROR_BODY_BYTES : MAX_ANSWER_BYTES);
    } catch (error) {
      // The connection was lost after the headers. Thrown here, an SDK would take it for a call
      // that never reached the provider, and send it again (maxRetries); an answer the provider
      // had taken is handed back instead, its body failing with AnswerCutError, which the adapter
      // bills. A refusal (4xx/5xx) cut short is a failed call as before.
      if (refused) throw error;
      return new BufferedResponse(new AnswerCutError(error), upstream.statusCode, headers, url) as unknown as Response;
    }
    // An answer past the bound fails as it is read; a refusal keeps its start, for its message.
    const answer = read.whole || refused ? read.bytes : new BodyTooLongError(MAX_ANSWER_BYTES);
    return new BufferedResponse(answer, upstream.statusCode, headers, url) as unknown as Response;
  };
}

/**
 * The body's bytes up to `limit`, counted as they come: `whole` false when it had more, which is
 * then not read: the body is destroyed, so its connection closes instead of being drained (an
 * upstream may be sending without end). One copy into one buffer at the end, as undici's own
 * arrayBuffer() and json() make.
 */
function readUpTo(body: Readable, limit: number): Promise<{ bytes: Uint8Array; whole: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      if (length + chunk.length <= limit) {
        chunks.push(chunk);
        length += chunk.length;
        return;
      }
      chunks.push(chunk.subarray(0, limit - length));
      body.off("data", onData);
      body.off("end", onEnd);
      // undici fails a body destroyed before its end with RequestAbortedError: nobody reads it now.
      body.on("error", () => undefined);
      body.destroy();
      resolve({ bytes: Buffer.concat(chunks, limit), whole: false });
    };
    const onEnd = () => resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length), whole: true });
    body.on("data", onData).once("end", onEnd).once("error", reject);
  });
}

const decoder = new TextDecoder();

/**
 * A read-whole answer with the part of Response that the SDKs use (ok, status, url, headers,
 * text, json; `body` for their debug log). A WHATWG Response would build a byte stream for a
 * body that is already in memory: about 8% of the gateway's CPU in the benchmark. The SDK
 * tests in undici-fetch.test.ts hold both SDKs to this surface. A body cut off after the
 * headers is an AnswerCutError, and one past its bound a BodyTooLongError, which every read of it throws.
 */
class BufferedResponse {
  /** Read whole within the bounds: boundedFetch (adapters/shared/bounded-fetch.ts) leaves it as it is. */
  readonly [BODY_BOUNDED] = true;
  readonly ok: boolean;
  readonly statusText = "";
  readonly redirected = false;
  readonly type = "basic";
  bodyUsed = false;

  constructor(
    private readonly bytes: Uint8Array | AnswerCutError | BodyTooLongError,
    readonly status: number,
    readonly headers: Headers,
    readonly url: string,
  ) {
    this.ok = status >= 200 && status < 300;
  }

  get body(): ReadableStream<Uint8Array> {
    const bytes = this.bytes;
    if (!(bytes instanceof Uint8Array)) return new ReadableStream({ start: (controller) => controller.error(bytes) });
    return new Response(bytes as Uint8Array<ArrayBuffer>).body!;
  }

  async text(): Promise<string> {
    return decoder.decode(this.read());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    // A copy of the answer's bytes alone: they may be a Node Buffer, a view into a pool or the
    // socket's memory, whose `.buffer` is all of it (other connections' bytes too).
    const bytes = this.read();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  private read(): Uint8Array {
    this.bodyUsed = true;
    if (!(this.bytes instanceof Uint8Array)) throw this.bytes;
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
