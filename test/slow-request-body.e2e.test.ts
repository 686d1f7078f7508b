import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";

// A key holder who sends a request's body slowly, or stops just short of its end, held the
// connection and the bytes sent so far until Node's own deadline, 5 minutes later (found by
// review: 40 such connections held 320 MiB); rate limits and budgets are checked only once the
// body is in. server.requestTimeoutSeconds (60 by default) now ends such a request with a 408.

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ ...testConfig(), server: { requestTimeoutSeconds: 2 } });
});
afterAll(() => gateway?.close());

/** Sends the headers and part of a body, then nothing; resolves with what came back and when the socket closed. */
function stallMidBody(): Promise<{ reply: string; closedAfterMs: number }> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${APP_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":"gpt",`);
    });
    let reply = "";
    socket.on("data", (data) => (reply += data.toString()));
    socket.on("close", () => resolve({ reply, closedAfterMs: performance.now() - started }));
    socket.on("error", reject);
    setTimeout(() => socket.destroy(new Error("still open after 15 s")), 15_000);
  });
}

describe("a request whose body stops arriving", () => {
  it("is answered 408 and closed at server.requestTimeoutSeconds, not Node's 5 minutes", async () => {
    const { reply, closedAfterMs } = await stallMidBody();
    expect(reply.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(closedAfterMs).toBeGreaterThanOrEqual(1_900);
    expect(closedAfterMs).toBeLessThan(10_000); // 2 s and Node's check every 0.5 s; loose for a busy machine
  });
});
