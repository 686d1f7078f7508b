import { safeHeaderValues } from "./header-value.ts";

/** A streamed answer's response: the SSE headers every stream needs, plus tollgate's own. */
export function sseResponse(body: ReadableStream<Uint8Array>, headers: Record<string, string>): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      // Tell nginx-style proxies in front of tollgate not to buffer the stream either.
      "x-accel-buffering": "no",
      // Without it @hono/node-server waits for a second chunk, up to a timer turn (~1 ms), to see
      // whether the whole body fits a Content-Length; a stream must go out as it comes.
      "transfer-encoding": "chunked",
      ...safeHeaderValues(headers),
    },
  });
}
