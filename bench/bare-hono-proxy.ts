// Baseline 1, the limit of this stack: a bare Hono app on @hono/node-server (default options)
// forwarding POST /v1/chat/completions with undici.request over a keep-alive Agent. JSON answers are
// buffered and returned; SSE answers are piped through as a stream. No parsing, no auth, no routing.
// Usage: tsx bench/bare-hono-proxy.ts <port> <upstream origin>
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { forward, toWebStream } from "./lib/forward.ts";
import { announce, CHAT_PATH, portFromArgs } from "./lib/shared.ts";

const app = new Hono();
app.post(CHAT_PATH, async (c) => {
  const { status, contentType, body } = await forward(c);
  if (contentType.startsWith("text/event-stream")) {
    return c.body(toWebStream(body), status, { "content-type": contentType, "cache-control": "no-cache" });
  }
  // A Uint8Array (not an ArrayBuffer) body takes @hono/node-server's fast path.
  return c.body(new Uint8Array(await body.arrayBuffer()), status, { "content-type": contentType });
});

const server = serve({ fetch: app.fetch, port: portFromArgs(), hostname: "127.0.0.1" }, (info) => {
  announce({ type: "ready", port: info.port });
});
(server as Server).keepAliveTimeout = 60_000;
