import { createParser } from "eventsource-parser";

/**
 * The `data` of each server-sent event of a body, as it arrives, until `[DONE]`. Events that
 * arrive in one network read come out together, without waiting for the next read.
 */
export async function* readSseData(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const pending: string[] = [];
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") done = true;
      else if (!done) pending.push(event.data);
    },
  });
  const decoder = new TextDecoder();
  // Leaving this loop early (the client left, or [DONE]) returns the iterator: the body stops.
  for await (const bytes of chunksOf(body)) {
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
