import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";

// What Node answers before the app sees a request: a header block over its 16 KiB (a large JWT, a
// proxy's x-forwarded-client-cert), a request slower than server.requestTimeoutSeconds. Node wrote
// a bare status line: the SDKs reported "431 status code (no body)", with nothing naming the limit
// and no request id. Each gets tollgate's JSON error now.

let gateway: TestGateway;
beforeAll(async () => {
  const config = testConfig();
  gateway = await startTestGateway({ ...config, server: { ...config.server, requestTimeoutSeconds: 1 } });
});
afterAll(async () => {
  await gateway?.close();
});

/** Writes `request` on a fresh connection and resolves with what comes back until the server closes it. */
function exchange(request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(gateway.url).port), "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => (received += chunk.toString("utf8")));
    socket.once("error", reject);
    socket.once("close", () => {
      const [head = "", body = ""] = received.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), headers: head, body });
    });
    socket.write(request);
  });
}

/** The same id under tollgate's name and those the SDKs read (OpenAI's `_request_id`, Anthropic's `request_id`). */
function expectRequestIdUnderEveryName(headers: string): void {
  const id = /\r\nx-tollgate-request-id: (req_\w+)/.exec(headers)?.[1];
  expect(id).toBeDefined();
  expect(headers).toContain(`\r\nx-request-id: ${id}`);
  expect(headers).toContain(`\r\nrequest-id: ${id}`);
}

describe("errors Node meets before the app", () => {
  it("a header block over 16 KiB is a 431 with a JSON error naming the limit and a request id", async () => {
    const answer = await exchange(`GET /v1/models HTTP/1.1\r\nHost: gateway\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expectRequestIdUnderEveryName(answer.headers);
    expect(JSON.parse(answer.body)).toEqual({
      error: { message: expect.stringContaining("headers are over the 16384 bytes this server reads"), type: "invalid_request_error", param: null, code: "headers_too_large" },
    });
  });

  it("a body that stops arriving is a 408 naming server.requestTimeoutSeconds", async () => {
    const answer = await exchange(`POST /v1/messages HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${APP_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`);
    expect(answer.status).toBe(408);
    expectRequestIdUnderEveryName(answer.headers);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: "request_timeout", message: expect.stringContaining("its headers must arrive within 1 s, and all of it within server.requestTimeoutSeconds (1 s)") });
  }, 10_000);
});
