// What the Hono baselines share: the request forwarded as bytes with undici over a keep-alive
// pool, and an SSE answer turned into a web stream for Hono.
import type { Readable } from "node:stream";
import type { Context } from "hono";
import { Agent, request } from "undici";
import { CHAT_PATH, upstreamFromArgs } from "./shared.ts";

const target = new URL(CHAT_PATH, upstreamFromArgs()).href;
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

/** POSTs the client's body upstream unchanged; the answer's status, content type and body. */
export async function forward(c: Context) {
  const up = await request(target, {
    method: "POST",
    dispatcher,
    headers: { "content-type": c.req.header("content-type") ?? "application/json" },
    body: await c.req.arrayBuffer().then((b) => Buffer.from(b)),
  });
  return { status: up.statusCode as 200, contentType: String(up.headers["content-type"] ?? "application/json"), body: up.body };
}

/** Node Readable → web ReadableStream, calling `done` after the last chunk. (Readable.toWeb on
 * undici's body can throw "Controller is already closed" on Node 20, so pull from its async
 * iterator instead.) */
export function toWebStream(body: Readable, done: () => void = () => {}): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done: ended } = await it.next();
      if (ended) {
        controller.close();
        done();
      } else controller.enqueue(value);
    },
    cancel() {
      body.destroy();
    },
  });
}
