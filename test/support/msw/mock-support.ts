import type { HttpHandler } from "msw";
// Pieces shared by the OpenAI and Anthropic msw mocks: request recording, the reply queue,
// deterministic token counts, ids, and a frame-by-frame SSE body that stops when the caller aborts.

/** What a mock saw of one upstream request, so a test can inspect what the gateway sent. */
export interface RecordedRequest {
  url: string;
  /** Header names are lower-case (as the Fetch `Headers` object yields them). */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it was not JSON. */
  body: any;
  /**
   * Becomes true when the request's AbortSignal fires, or when the reader cancels a response body
   * that had not finished: both are what a real server sees as the client going away.
   */
  aborted: boolean;
}

export interface ProviderMockOptions {
  baseUrl?: string;
  apiKey?: string;
}

/** A cloud provider's stand-in: its msw handlers, what it received, and the replies it will give. */
export interface ProviderMock<Reply> {
  handlers: HttpHandler[];
  /** Every request received, in order (including rejected ones). */
  requests: RecordedRequest[];
  /** Queues replies for the next requests; when the queue is empty the default text reply is used. */
  enqueue(...replies: Reply[]): void;
  /** Empties both the reply queue and `requests` (the same array object is kept). */
  reset(): void;
}

/** The mock around its handlers: `requests` and `replies` are the ones they use. */
export function providerMock<Reply>(handlers: HttpHandler | HttpHandler[], requests: RecordedRequest[], replies: ReplyQueue<Reply>): ProviderMock<Reply> {
  return {
    handlers: [handlers].flat(),
    requests,
    enqueue: (...next) => replies.enqueue(...next),
    reset: () => {
      replies.clear();
      requests.length = 0;
    },
  };
}

/** Records a request (reading a clone, so the handler can still read the original). */
export async function recordRequest(request: Request, into: RecordedRequest[]): Promise<RecordedRequest> {
  const text = await request.clone().text();
  let body: any = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // Keep the raw text: a test may want to see exactly what malformed body was sent.
  }
  const record: RecordedRequest = {
    url: request.url,
    headers: Object.fromEntries(request.headers.entries()),
    body,
    aborted: request.signal.aborted,
  };
  request.signal.addEventListener("abort", () => (record.aborted = true), { once: true });
  into.push(record);
  return record;
}

/** FIFO of scripted replies; `next()` falls back to a default once the script runs out. */
export class ReplyQueue<Reply> {
  private readonly pending: Reply[] = [];
  constructor(private readonly fallback: () => Reply) {}
  enqueue(...replies: Reply[]): void {
    this.pending.push(...replies);
  }
  next(): Reply {
    return this.pending.shift() ?? this.fallback();
  }
  clear(): void {
    this.pending.length = 0;
  }
}

/** The mocks' token unit: whitespace-separated words. Deterministic, and easy to predict in a test. */
export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * Words in every `text` field and string content of a request part (messages, system, tool results),
 * recursively. Tool definitions, images and other non-text parts count nothing.
 */
export function countWordsInContent(content: unknown): number {
  if (typeof content === "string") return countWords(content);
  if (Array.isArray(content)) return content.reduce((sum: number, part) => sum + countWordsInContent(part), 0);
  if (content && typeof content === "object") {
    const part = content as { text?: unknown; content?: unknown };
    return (typeof part.text === "string" ? countWords(part.text) : 0) + countWordsInContent(part.content);
  }
  return 0;
}

/**
 * Splits text the way providers stream it: one word per chunk, the separating space kept at the
 * front of the next word ("Hello from" → ["Hello", " from"]). Joining the chunks gives the text back.
 */
export function splitIntoWordChunks(text: string): string[] {
  const chunks = text.match(/\s*\S+/g);
  if (!chunks) return text === "" ? [] : [text]; // empty, or whitespace only
  const trailingSpace = /\s+$/.exec(text)?.[0];
  if (trailingSpace) chunks[chunks.length - 1] += trailingSpace;
  return chunks;
}

/** Splits a string into pieces of at most `size` characters (how tool-call JSON is streamed). */
export function splitIntoPieces(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function randomString(length: number, alphabet = ALPHANUMERIC): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

export function randomHex(length: number): string {
  return randomString(length, "0123456789abcdef");
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: callers check `signal.aborted`). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Resolves when `signal` aborts: a request that never gets an answer until its caller gives up. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Yields `frames` with `delayMs` between consecutive ones; stops early once `signal` aborts. */
export async function* paced(frames: Iterable<string>, delayMs: number, signal: AbortSignal): AsyncGenerator<string, void, undefined> {
  let first = true;
  for (const frame of frames) {
    if (!first && delayMs > 0) await sleep(delayMs, signal);
    if (signal.aborted) return;
    first = false;
    yield frame;
  }
}

/** Yields `frames`, then nothing more until `signal` aborts: a provider that hangs mid-answer with its connection open. */
export async function* thenStall(frames: Iterable<string>, signal: AbortSignal): AsyncGenerator<string, void, undefined> {
  yield* frames;
  await untilAborted(signal);
}

/**
 * The body of a 200 answer (not streamed) that sends the first bytes of its JSON and then nothing
 * until the request aborts: a provider wedged after its headers.
 */
export function stalledJsonBody(opening: string, signal: AbortSignal, onCancel: () => void): ReadableStream<Uint8Array> {
  return sseBody(thenStall([opening], signal), signal, onCancel);
}

/**
 * A response body that pulls one SSE frame at a time from `frames`, so each frame reaches the client
 * as its own chunk and any `await sleep(...)` inside the generator really delays it.
 * When `signal` aborts, the body errors with an AbortError (what undici does to a real aborted
 * response) and the generator is stopped; `onCancel` runs if the reader cancels before the end.
 */
export function sseBody(
  frames: AsyncGenerator<string, void, undefined>,
  signal: AbortSignal,
  onCancel: () => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let finished = false;
  const stop = () => {
    finished = true;
    void frames.return(undefined);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const onAbort = () => {
        if (finished) return;
        stop();
        controller.error(new DOMException("This operation was aborted", "AbortError"));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      if (finished) return;
      const step = await frames.next();
      if (finished) return; // aborted while the generator was waiting
      if (step.done) {
        finished = true;
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(step.value));
    },
    cancel() {
      if (finished) return;
      stop();
      onCancel();
    },
  });
}
