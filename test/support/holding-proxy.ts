// Stands between the gateway and a real local decoder and passes every request on; a streamed
// answer, though, stops after its first event with content: the rest is held back (the decoder's
// generation is stopped), as from a decoder still generating. The tiny test model answers within
// milliseconds, and the gateway's writes fill a loopback socket's buffers long before a client
// reads: without the hold, a client that "cuts after the first delta" may have been sent the
// whole answer, its usage included. `close()` makes the decoder's address refuse connections, as
// a decoder that died does, and cuts the streams held.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type HoldingProxy = {
  /** The OpenAI-compatible root to configure, `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  close(): Promise<void>;
};

/** `origin`: the decoder's, e.g. llama-server's `http://127.0.0.1:PORT`. */
export async function startHoldingProxy(origin: string): Promise<HoldingProxy> {
  const server = createServer((request, response) => void pass(origin, request, response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function pass(origin: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const upstream = new AbortController();
  response.on("close", () => upstream.abort());
  try {
    const answer = await fetch(`${origin}${request.url}`, {
      method: request.method,
      headers: { "content-type": "application/json" },
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      signal: upstream.signal,
    });
    const type = answer.headers.get("content-type") ?? "application/json";
    response.writeHead(answer.status, { "content-type": type });
    if (!type.includes("text/event-stream") || !answer.body) return void response.end(Buffer.from(await answer.arrayBuffer()));
    const reader = answer.body.getReader();
    const text = new TextDecoder();
    let buffered = "";
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffered += text.decode(read.value, { stream: true });
      for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
        const event = buffered.slice(0, end + 2);
        buffered = buffered.slice(end + 2);
        response.write(event);
        // The first token of the answer: held from here, never ended. The decoder's answer is
        // cancelled, which stops it generating.
        if (/"content":"[^"]/.test(event)) return void reader.cancel().catch(() => undefined);
      }
    }
    response.end();
  } catch {
    response.destroy();
  }
}
