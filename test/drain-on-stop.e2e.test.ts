import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startGateway } from "../src/node/serve.ts";
import { APP_KEY, sha256, startTestGateway, temporaryLedgerPath } from "./support/gateway.ts";
import { until } from "./support/until.ts";

// The drains a stop signal gives (server.drainStreamsSeconds, server.drainAnswersSeconds), as
// the CLI passes them to close(). Every connection still open is closed when the answers' drain
// ends, so a longer stream drain was a setting with no effect (and a log line that promised it).

async function drainsOf(server: object, lines: string[] = []) {
  const gateway = await startGateway({
    config: {
      providers: { local: { type: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1" } },
      routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
      keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
      store: { path: temporaryLedgerPath() },
      server,
    },
    port: 0,
    log: (line) => lines.push(line),
  });
  await gateway.close();
  return gateway.drainOnStop;
}

describe("the drain on a stop signal", () => {
  it("is the config's, in milliseconds", async () => {
    expect(await drainsOf({ drainStreamsSeconds: 2, drainAnswersSeconds: 60 })).toEqual({ streamDrainMs: 2_000, drainMs: 60_000 });
  });

  it("for streams, is at most the answers' drain, and start-up says so", async () => {
    const lines: string[] = [];
    expect(await drainsOf({ drainStreamsSeconds: 8, drainAnswersSeconds: 5 }, lines)).toEqual({ streamDrainMs: 5_000, drainMs: 5_000 });
    expect(lines).toContain(
      "[tollgate] warning: server.drainStreamsSeconds (8) is more than server.drainAnswersSeconds (5): on a stop, streams are cut at 5 s, when every connection still open is closed; raise drainAnswersSeconds to give them longer",
    );
  });

  it("says nothing of the drains when they are as they should be", async () => {
    const lines: string[] = [];
    await drainsOf({}, lines);
    expect(lines.join("\n")).not.toContain("drainStreamsSeconds");
  });
});

describe("connections at a stop", () => {
  // A stop closes the connections at rest at once (Node's closeIdleConnections() passed over one
  // whose client had aborted a stream, which held close() until the keep-alive timeout), but not
  // one whose next request is arriving: that request is answered, with `Connection: close`.
  it("a request half sent on a kept connection when the stop begins is answered, not reset", async () => {
    const gateway = await startTestGateway();
    const socket = connect(Number(new URL(gateway.url).port), "127.0.0.1");
    let text = "";
    let closed = false;
    socket.on("data", (data) => (text += data.toString()));
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n");
    await until(() => text.includes("\r\n\r\n"), "the first answer");
    text = "";
    socket.write("GET /v1/models HTTP/1.1\r\nHost: gateway\r\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = gateway.close({ drainMs: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (!closed) socket.write(`Authorization: Bearer ${APP_KEY}\r\n\r\n`);
    await closing;
    await until(() => closed, "the connection's end");
    expect({ closedBeforeAnswer: closed && !text, status: text.split("\r\n")[0] }).toEqual({ closedBeforeAnswer: false, status: "HTTP/1.1 200 OK" });
    expect(text.toLowerCase()).toContain("connection: close");
  });
});
