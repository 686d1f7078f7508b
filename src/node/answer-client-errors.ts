import { STATUS_CODES, maxHeaderSize, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { openAIDialect } from "../dialects/dialect.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { requestIdHeaders } from "../gateway/json-response.ts";
import { newRequestId } from "../gateway/request-id.ts";
import { headersTimeoutSeconds } from "./server-timeouts.ts";

// What Node answers itself, before the app sees a request: a header block over what it reads, a
// request not in whole by server.requestTimeoutSeconds, a request line or length it cannot parse.
// Node wrote a bare status line (the SDKs said "431 status code (no body)"); the client gets
// tollgate's JSON error instead, with a request id, naming the limit and the fix. In OpenAI's
// shape: the request's path, which says its dialect, may not have been read.

export function answerClientErrors(server: Server, requestTimeoutSeconds: number): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    // Nobody to answer, or an answer already under way: as Node does, only close.
    if (!socket.writable || answering?.headersSent || error.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const failure = clientFailure(error, requestTimeoutSeconds);
    const requestId = newRequestId();
    const body = JSON.stringify(openAIDialect.renderError(failure, requestId));
    const head = [
      `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}`,
      "content-type: application/json",
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries(requestIdHeaders(requestId)).map(([name, value]) => `${name}: ${value}`),
      "connection: close",
    ];
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
  });
}

function clientFailure(error: NodeJS.ErrnoException, requestTimeoutSeconds: number): GatewayError {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new GatewayError("headers_too_large", `the request's headers are over the ${maxHeaderSize} bytes this server reads: send fewer or shorter headers, or start tollgate with NODE_OPTIONS=--max-http-header-size=<bytes>`, {
        code: "headers_too_large",
      });
    // Node says the same of headers slower than their own limit (at most 20 s, see serve.ts).
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new GatewayError(
        "request_timeout",
        `the request did not arrive in time: its headers must arrive within ${headersTimeoutSeconds(requestTimeoutSeconds)} s, and all of it within server.requestTimeoutSeconds (${requestTimeoutSeconds} s); send it again, or raise server.requestTimeoutSeconds for clients this slow`,
        { code: "request_timeout" },
      );
    default:
      return new GatewayError("invalid_request", `a malformed HTTP request (${error.code ?? error.message}): check the client, or the proxy in front of tollgate`, { code: "malformed_http_request" });
  }
}
