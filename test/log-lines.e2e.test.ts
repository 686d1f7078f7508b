// One event, one log line. A proxy in front of a local decoder (nginx, an ingress) answers 502
// with a multi-line HTML page, which the provider error quotes: it was logged as 8 lines, all but
// the first without the request id, and log shippers (Fluent Bit, Vector) that split on newlines
// made 8 records of it. Now the page's text is on one line, and any newline in a log line is
// written as \n.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { APP_KEY, sha256, temporaryLedgerPath } from "./support/gateway.ts";

const NGINX_502 = `<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n`;

let upstream: Server;
let answer: "html" | "json" = "html";
let gateway: RunningGateway;
const lines: string[] = [];

beforeAll(async () => {
  upstream = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (answer === "json") {
        // A JSON error whose message holds a lone carriage return: it goes into the log line as sent.
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "CUDA error\rdevice lost", type: "server_error", code: 500 } }));
        return;
      }
      response.writeHead(502, { "content-type": "text/html" });
      response.end(NGINX_502);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gateway = await startGateway({
    config: {
      providers: { local: { type: "openai-compatible", baseUrl, pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 } } } },
      routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
      keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
      store: { path: temporaryLedgerPath() },
    },
    port: 0,
    env: {},
    log: (line) => lines.push(line),
  });
});
afterAll(async () => {
  await gateway?.close({ drainMs: 100 });
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

/** Sends a request the upstream fails, and returns the answer and the log lines about it. */
async function failedRequest() {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(response.status).toBe(502);
  const requestId = response.headers.get("x-tollgate-request-id")!;
  const about = lines.filter((line) => line.includes(requestId));
  expect(about.length).toBeGreaterThan(0);
  return { response, about };
}

/** What a log shipper that splits on line breaks makes of them: one record each, or more. */
const brokenLines = (about: string[]) => about.filter((line) => /[\r\n]/.test(line));

describe("log lines", () => {
  it("a provider's multi-line error page is logged as one line", async () => {
    answer = "html";
    const { response, about } = await failedRequest();
    expect(brokenLines(about), "one event became several log lines").toEqual([]);
    // And the client's error message holds the page's text on one line.
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toContain("<html> <head><title>502 Bad Gateway</title></head> <body>");
    expect(error.message).not.toMatch(/[\r\n]/);
  });

  it("a provider's message with a lone carriage return is one line too", async () => {
    answer = "json";
    const { about } = await failedRequest();
    expect(about.join("")).toContain("CUDA error\\ndevice lost");
    expect(brokenLines(about)).toEqual([]);
  });
});
