import { createParser } from "eventsource-parser";
import type { EventBound } from "../shared/event-bound.ts";

/**
 * The `data` of each server-sent event of a body, as it arrives, until `[DONE]`. Events that
 * arrive in one network read come out together, without waiting for the next read.
 *
 * llama-server builds before October 2025 (llama.cpp PR #16486) send a failure after their 200
 * as a line of an `error` field, `error: {"code":…,"message":…,"type":…}`, which SSE readers drop
 * as an unknown field. It comes out here as the newer form, `{"error": {…}}`, so that it fails the
 * call with the decoder's own error (a context overflow stays a 400), not as a cut stream.
 *
 * `bound` sees each read before the parser does: the parser keeps an unfinished event in memory,
 * so a decoder that never ends one fails the call at the bound instead (see event-bound.ts).
 */
export async function* readSseData(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, bound: EventBound): AsyncGenerator<string> {
  const pending: string[] = [];
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") done = true;
      else if (!done) pending.push(event.data);
    },
    onError(error) {
      if (error.type === "unknown-field" && error.field === "error" && error.value && !done) pending.push(`{"error":${error.value}}`);
    },
  });
  const decoder = new TextDecoder();
  // Leaving this loop early (the client left, or [DONE]) returns the iterator: the body stops.
  const chunks = chunksOf(body);
  for await (const bytes of chunks) {
    try {
      bound.see(bytes);
    } catch (error) {
      // Thrown into the body, not only left: the Node transport then cuts the connection at once,
      // where a body left early (at [DONE]) is drained for a while (src/node/undici-fetch.ts).
      await chunks.throw(error);
      throw error;
    }
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0) yield pending.shift()!;
    if (done) break;
  }
  // A last event without its closing blank line still counts (some servers end that way; the
  // SSE rule would drop it, and with it, often, the usage).
  if (!done) parser.feed("\n\n");
  while (pending.length > 0) yield pending.shift()!;
}

/** A WHATWG stream through its reader (not every runtime iterates one), a Node body as it is. */
export async function* chunksOf(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (!("getReader" in body)) return yield* body;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
