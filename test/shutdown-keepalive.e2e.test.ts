// Shutdown behind a load balancer: answers say `Connection: close` once close() began, and close() returns when the last answer ends.
// Used to be wrong:
//   serve.ts close(): server.close() stops new connections and closes the connections idle at that
//   moment, but a keep-alive connection whose request finishes during the drain stays open until
//   Node's keepAliveTimeout (5 s) or the drain limit. Behind a load balancer (which always keeps
//   connections open) every restart therefore waits ~5-8 s after the last answer, however quickly
//   the answers in flight finish, and meanwhile new requests sent on those connections are served.
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestGateway, testConfig, APP_KEY } from "./support/gateway.ts";
import { startFakeDecoder, chunk, completion, sendJson, type FakeDecoder } from "./support/fake-decoder.ts";

let decoder: FakeDecoder;
beforeAll(async () => {
  decoder = await startFakeDecoder();
  // A stream that takes ~600 ms; a whole answer after ~600 ms.
  decoder.handle = (body, res) => {
    if (!(body as { stream?: boolean }).stream) {
      setTimeout(() => sendJson(res, completion("x", { content: "hi" }, "stop", { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })), 600);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("c", { role: "assistant", content: "a" }));
    setTimeout(() => {
      res.write(chunk("c", { content: "b" }, "stop"));
      res.write(chunk("c", null, null, { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
      res.end("data: [DONE]\n\n");
    }, 600);
  };
});
afterAll(() => decoder.close());

it("close() returns soon after the last answer in flight ends, even when its client keeps the connection alive", async () => {
  const gateway = await startTestGateway(testConfig(decoder.baseUrl));
  const agent = new http.Agent({ keepAlive: true });
  const body = JSON.stringify({ model: "local", stream: true, messages: [{ role: "user", content: "hi" }] });
  const streamEnded = new Promise<number>((resolve, reject) => {
    const req = http.request(`${gateway.url}/v1/chat/completions`, { method: "POST", agent, headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(Date.now()));
    });
    req.on("error", reject);
    req.end(body);
  });
  await new Promise((r) => setTimeout(r, 200));
  const closed = gateway.close({ drainMs: 20_000 }).then(() => Date.now());
  const endedAt = await streamEnded;
  const closedAt = await closed;
  agent.destroy();
  // The stream finished normally; the process could stop right after it.
  expect(closedAt - endedAt).toBeLessThan(2_000);
}, 30_000);

it("once close() has begun, an answer on a kept-alive connection says `Connection: close` (the load balancer stops sending there)", async () => {
  const gateway = await startTestGateway(testConfig(decoder.baseUrl));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (stream: boolean) =>
    new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
      const req = http.request(`${gateway.url}/v1/chat/completions`, { method: "POST", agent, headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" } }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      });
      req.on("error", reject);
      req.end(JSON.stringify({ model: "local", stream, messages: [{ role: "user", content: "hi" }] }));
    });
  // Not streamed: its headers are still to be written when the stop begins.
  const inFlight = post(false);
  await new Promise((r) => setTimeout(r, 200));
  const closed = gateway.close({ drainMs: 20_000 });
  const first = await inFlight;
  agent.destroy();
  await closed;
  // The answer that was in flight when the stop began must end its connection, or the balancer
  // sends the next request on it, which is served (and then cut at the drain limit).
  expect(first.status).toBe(200);
  expect(first.connection).toBe("close");
}, 30_000);
