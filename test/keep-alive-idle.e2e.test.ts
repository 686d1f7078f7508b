import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";

// A load balancer keeps its idle connections to the gateway for up to its own idle timeout (AWS
// ALB: 60 s) and sends the next request down one of them. Node closes an idle keep-alive
// connection after 5 s by default: a request the balancer sent as the gateway closed it became
// a 502 for the client. The gateway now keeps them 65 s (server.keepAliveTimeoutSeconds).

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway(testConfig());
});
afterAll(async () => {
  await gateway?.close();
});

/** Sends GET /healthz on `socket` and resolves with the answer's status line. */
function healthz(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const onData = (chunk: Buffer) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n\r\n");
      const length = Number(/content-length: *(\d+)/i.exec(received)?.[1] ?? NaN);
      if (end !== -1 && received.length >= end + 4 + length) {
        socket.off("data", onData);
        resolve(received.slice(0, received.indexOf("\r\n")));
      }
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(`GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n`);
  });
}

describe("an idle keep-alive connection", () => {
  it("is still open for the next request after 6.5 s (Node's own default closed it at 5 s)", async () => {
    const port = Number(new URL(gateway.url).port);
    const socket = connect(port, "127.0.0.1");
    let closedAt: number | undefined;
    socket.once("close", () => (closedAt = Date.now()));
    expect(await healthz(socket)).toBe("HTTP/1.1 200 OK");
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    expect(closedAt).toBeUndefined();
    expect(await healthz(socket)).toBe("HTTP/1.1 200 OK");
    socket.destroy();
  }, 20_000);
});
