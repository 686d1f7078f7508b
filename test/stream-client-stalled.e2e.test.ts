import { request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunk, startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { APP_KEY, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";

// A client that opens a stream and then stops reading (a hung process, a deliberate slow reader)
// while the model keeps writing. Once the socket's buffers are full, the stream waits on the
// client, which backpressure makes correct; but it waited for ever, so the upstream call stayed
// open and the budget reservation was renewed for as long as the connection lived: a key could
// hold a route's budget (shared by every team) with streams it never read. Like nginx's
// send_timeout, a stream whose client takes no bytes for `server.streamSendTimeoutSeconds` is cut.

let decoder: FakeDecoder;
let gateway: TestGateway;

/** Enough SSE to fill both sides' socket buffers many times over, written as fast as it goes. */
const CHUNKS = 60_000;
/** "endless": a model that writes for as long as it is let; "finished": one whose whole answer is written, usage last. */
let writes: "endless" | "finished" = "endless";

beforeAll(async () => {
  decoder = await startFakeDecoder();
  decoder.handle = (_body, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    const token = chunk("cmpl-stall", { content: " token" });
    let sent = 0;
    const writeMore = () => {
      while (writes === "endless" || sent < CHUNKS) {
        if (response.destroyed) return;
        sent++;
        if (!response.write(token)) return void response.once("drain", writeMore);
      }
      response.end(chunk("cmpl-stall", { content: "" }, "stop") + chunk("cmpl-stall", null, null, { usage: { prompt_tokens: 5, completion_tokens: CHUNKS, total_tokens: CHUNKS + 5 } }) + "data: [DONE]\n\n");
    };
    response.write(chunk("cmpl-stall", { role: "assistant", content: "" }));
    writeMore();
  };
  const base = testConfig(decoder.baseUrl);
  gateway = await startTestGateway(
    {
      ...base,
      routes: { ...base.routes, local: { targets: [{ provider: "local", model: "tiny-local" }], budget: { usd: 100, window: "total", mode: "hard" } } },
      server: { ...base.server, streamSendTimeoutSeconds: 1 },
    },
    "undici",
  );
});
afterAll(async () => {
  // A failed run leaves its stalled connection open: cut it rather than wait for it.
  await gateway?.close({ drainMs: 100 });
  await decoder?.close();
});

async function routeBudget(): Promise<{ reservedUsd: number; spentUsd: number }> {
  const response = await fetch(`${gateway.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } });
  const { scopes } = (await response.json()) as { scopes: { scope: string; reservedUsd: number; spentUsd: number }[] };
  return scopes.find((scope) => scope.scope === "route:local")!;
}

/** Opens a stream, reads one chunk, then never again: the socket's buffers fill and the gateway must wait. */
async function stalledStream(): Promise<{ response: IncomingMessage; requestId: string }> {
  const body = JSON.stringify({ model: "local", stream: true, messages: [{ role: "user", content: "write for ever" }] });
  const url = new URL(`${gateway.url}/v1/chat/completions`);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = httpRequest(url, { method: "POST", headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" } }, resolve);
    sent.on("error", reject);
    sent.end(body);
  });
  expect(response.statusCode).toBe(200);
  await new Promise((resolve) => response.once("data", resolve));
  response.pause();
  return { response, requestId: String(response.headers["x-tollgate-request-id"]) };
}

describe("a streaming client that stops reading", () => {
  it("is cut after streamSendTimeoutSeconds: the upstream is stopped, the record says aborted, the reservation is gone", async () => {
    writes = "endless";
    const { response, requestId } = await stalledStream();

    // The stream waits on the client with its reservation held (the worst case is on the budget).
    expect((await routeBudget()).reservedUsd).toBeGreaterThan(0);

    // Within the timeout (1 s, checked at most a quarter late) plus slack, the gateway gives up.
    const record = await waitForRecord(gateway, requestId, 10_000);
    expect(record.status).toBe("aborted");
    expect(decoder.lastClosedEarly()).toBe(true);
    // What was generated before the cut is billed (counted, as a stalled stream sends no usage).
    expect(record.usage.outputTokens).toBeGreaterThan(0);
    expect(record.estimated).toBe(true);
    const budget = await routeBudget();
    expect(budget.reservedUsd).toBe(0);
    expect(budget.spentUsd).toBe(record.cost.totalNano / 1e9);
    // The connection was closed, not left open behind a stream that will never end: reading on,
    // the client gets what its buffers held and then a cut-off response, never the answer's end.
    const ended = new Promise<boolean>((resolve) => response.once("close", () => resolve(response.complete)));
    response.resume();
    expect(await ended).toBe(false);
  }, 30_000);

  // The model had finished: the rest of its answer, its usage last, waited in the buffers between
  // it and tollgate, held back by the client. Was: dropped with the connection, and the record
  // held tollgate's count of what the client had been sent (about 35,000 of 50,000 tokens in a
  // review's test), where the provider bills every token it wrote.
  it("bills what the provider had already sent when it is cut: its own usage, not a count", async () => {
    writes = "finished";
    const { response, requestId } = await stalledStream();
    const record = await waitForRecord(gateway, requestId, 10_000);
    expect(record.status).toBe("aborted");
    expect(record.usage.outputTokens).toBe(CHUNKS);
    expect(record.estimated).toBe(false);
    response.destroy();
  }, 30_000);
});
