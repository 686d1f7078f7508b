import { GatewayError } from "../../src/errors/gateway-error.ts";

/**
 * The most bytes an answer not streamed (a 2xx body read whole) may take: 128 MiB. Every reader
 * keeps the whole body until its end, so an upstream answering with a body that never ends (or a
 * multi-GB one) grew the gateway's memory, for every tenant, until the process died. The largest
 * real answers are those with log probabilities: an entry of Chat Completions' `logprobs` with
 * the 20 alternatives an API allows (OpenAI's top_logprobs maximum, vLLM's max_logprobs default;
 * llama-server sends 20 when asked for none) is about 1.6 KB, so a 32,768-token answer (OpenAI's
 * largest with logprobs) is about 52 MB and 128 MiB holds about 80,000 tokens of it. An answer
 * without them is a few MB at most (128,000 tokens of text). Not configurable: no real answer
 * comes near it.
 */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;

/**
 * The most bytes read of a refusal's body (a status of 300 or more): 1 MiB. Real ones are a few
 * hundred bytes of JSON, or a proxy's HTML page; only their start reaches the error message
 * (post-chat-completions.ts keeps 500 characters of a body that is not JSON). Past it, the start
 * is kept as the body and the rest is not read.
 */
export const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/**
 * Thrown by a transport when an answer's body passes MAX_ANSWER_BYTES: it knows no provider
 * name, so mapProviderError makes it `answerTooLong` (the SDKs may wrap it: found among the causes).
 */
export class BodyTooLongError extends Error {
  override readonly name = "BodyTooLongError";
  constructor(readonly limit: number) {
    super(`the answer's body passed ${describeBytes(limit)}`);
  }
}

/**
 * An answer past the bound. Its headers came, so the provider had taken the call: billed (the
 * prompt as counted, estimated), as an answer whose connection was lost after them is
 * (finish-check.ts: connectionLost). Retryable: the client has nothing yet, the route may go on.
 */
export function answerTooLong(providerName: string, limit: number, cause: unknown): GatewayError {
  return new GatewayError("upstream", `provider "${providerName}" sent an answer longer than ${describeBytes(limit)}; tollgate stops reading an answer there`, {
    retryable: true,
    billed: {},
    cause,
  });
}

/** The BodyTooLongError that `error` is or was caused by, if any. */
export function bodyTooLong(error: unknown): BodyTooLongError | undefined {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 4; depth++) {
    if (at instanceof BodyTooLongError) return at;
    at = at.cause;
  }
  return undefined;
}

/**
 * Set on a response whose body its transport has already read whole within the bounds
 * (src/node/undici-fetch.ts): boundedFetch leaves it as it is.
 */
export const BODY_BOUNDED = Symbol("tollgate.bodyBounded");

/**
 * A body read to its end, or to `limit` bytes, then passed on as one read. Past the limit, the
 * upstream body is cancelled (its connection closes instead of sending on) and the stream fails
 * with BodyTooLongError (`past: "fail"`: an answer), or ends with the bytes up to the limit
 * (`past: "cut"`: a refusal's start, for its message). One read, not each as it comes: an SDK
 * asked for a stream reads a JSON answer as SSE, and the OpenAI SDK's decoder rescans all it holds
 * of an unfinished line on every read (event-bound.ts): 128 MiB in 64 KiB reads would take it
 * hours of CPU. Its reader would keep the whole body anyway; a body of one read is passed on uncopied.
 */
export function readWholeBody(body: ReadableStream<Uint8Array>, limit: number, past: "fail" | "cut"): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { bytes, whole } = await readerUpTo(reader, limit);
        if (!whole && past === "fail") throw new BodyTooLongError(limit);
        controller.enqueue(bytes);
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/**
 * A body's bytes, read until `limit`: `whole` false when it had more, which is then not read (the
 * upstream body is cancelled, its connection closed) and `bytes` holds the first `limit`.
 */
export async function readUpTo(body: ReadableStream<Uint8Array> | null, limit: number): Promise<{ bytes: Uint8Array; whole: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), whole: true };
  return readerUpTo(body.getReader(), limit);
}

async function readerUpTo(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<{ bytes: Uint8Array; whole: boolean }> {
  const parts: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: joinBytes(parts, length), whole: true };
    if (length + value.length > limit) {
      parts.push(value.subarray(0, limit - length));
      reader.cancel(new BodyTooLongError(limit)).catch(() => undefined);
      return { bytes: joinBytes(parts, limit), whole: false };
    }
    parts.push(value);
    length += value.length;
  }
}

/** The parts as one array of `length` bytes (their sum, unless cut short); one part is returned as it is. */
export function joinBytes(parts: Uint8Array[], length = parts.reduce((sum, part) => sum + part.length, 0)): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const whole = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

export function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
