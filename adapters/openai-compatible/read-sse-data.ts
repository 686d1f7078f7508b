import { createParser } from "eventsource-parser";

/**
 * The `data` of each server-sent event of a body, as it arrives, until `[DONE]`. Events that
 * arrive in one network read come out together, without waiting for the next read.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const pending: string[] = [];
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") done = true;
      else if (!done) pending.push(event.data);
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
    while (pending.length > 0) yield pending.shift()!;
  } finally {
    // Stop the body when the consumer stops early (the client left) or the stream said [DONE].
    await reader.cancel().catch(() => undefined);
  }
}
