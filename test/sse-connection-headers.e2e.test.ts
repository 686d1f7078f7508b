// A stream's connection handling is Node's: no chunked framing for HTTP/1.0, no keep-alive promised to a client that asked to close.
// Used to be wrong:
//   sse-response.ts forces `connection: keep-alive` and `transfer-encoding: chunked` on every
//   stream, whatever the client asked for: an HTTP/1.0 client gets chunk framing it cannot parse
//   (RFC 9112 §6.1: never chunked to 1.0) and a connection the server does not close, so it
//   cannot see the end of the body; an HTTP/1.1 client that sent `Connection: close` is told
//   keep-alive and left holding an open socket.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, head, rawHttp, startRig, type Rig } from "./support/decoder-rig.ts";

let rig: Rig;
beforeAll(async () => (rig = await startRig()));
afterAll(() => rig.close());

const body = JSON.stringify({ model: "local", stream: true, messages: [{ role: "user", content: "hi" }] });
const request = (version: string, extra = "") =>
  `POST /v1/chat/completions HTTP/${version}\r\nHost: x\r\nAuthorization: Bearer ${APP_KEY}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`;

describe("a streamed answer's connection headers", () => {
  it("an HTTP/1.0 client gets no chunked framing, and the server closes the connection at the end of the stream", async () => {
    const { text, closedByServer } = await rawHttp(rig.gateway.port, request("1.0"), 2000);
    expect(text).toContain("[DONE]");
    expect(head(text)).not.toContain("transfer-encoding: chunked");
    expect(closedByServer).toBe(true);
  });

  it("an HTTP/1.1 client that sent `Connection: close` is not told keep-alive, and the connection is closed after the stream", async () => {
    const { text, closedByServer } = await rawHttp(rig.gateway.port, request("1.1", "Connection: close\r\n"), 2000);
    expect(text).toContain("[DONE]");
    expect(head(text)).not.toContain("connection: keep-alive");
    expect(closedByServer).toBe(true);
  });
});
