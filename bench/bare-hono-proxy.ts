// Baseline 1, the limit of this stack: a bare Hono app on @hono/node-server (default options)
// forwarding POST /v1/chat/completions with undici.request over a keep-alive Agent. JSON answers are
// buffered and returned; SSE answers are piped through as a stream. No parsing, no auth, no routing.
// Usage: tsx bench/bare-hono-proxy.ts <port> <upstream origin>
import type { Server } from "node:http";
import { Readable } from "node:stream";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Agent, request } from "undici";
import { announce, CHAT_PATH, portFromArgs, upstreamFromArgs } from "./lib/shared.ts";

const target = new URL(CHAT_PATH, upstreamFromArgs()).href;
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

const app = new Hono();
app.post(CHAT_PATH, async (c) => {
  const up = await request(target, {
    method: "POST",
    dispatcher,
    headers: { "content-type": c.req.header("content-type") ?? "application/json" },
    body: await c.req.arrayBuffer().then((b) => Buffer.from(b)),
  });
  const contentType = String(up.headers["content-type"] ?? "application/json");
  const status = up.statusCode as 200;
  if (contentType.startsWith("text/event-stream")) {
    return c.body(toWebStream(up.body), status, { "content-type": contentType, "cache-control": "no-cache" });
  }
  // A Uint8Array (not an ArrayBuffer) body takes @hono/node-server's fast path.
  return c.body(new Uint8Array(await up.body.arrayBuffer()), status, { "content-type": contentType });
});

/** Node Readable → web ReadableStream. (Readable.toWeb on undici's body can throw
 * "Controller is already closed" on Node 20, so pull from its async iterator instead.) */
function toWebStream(body: Readable): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await it.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel() {
      body.destroy();
    },
  });
}

const server = serve({ fetch: app.fetch, port: portFromArgs(), hostname: "127.0.0.1" }, (info) => {
  announce({ type: "ready", port: info.port });
});
(server as Server).keepAliveTimeout = 60_000;
