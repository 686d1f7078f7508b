// SIGTERM on the Node entry (src/node/main.ts): in-flight answers get 8 s, then the streams
// still open are cut, and the ledger and the OpenTelemetry export are written out before exit.
// close() used to wait for every connection first, so one long stream held it until the forced
// exit and every metric not yet exported (the periodic export is every 60 s) was lost.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, sha256 } from "./support/gateway.ts";
import { createOtlpReceiver } from "./support/otlp-receiver.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/tollgate.mjs", import.meta.url));

const receiver = createOtlpReceiver();
let receiverUrl = "";
let upstream: Server;
let upstreamUrl = "";
let directory = "";
let child: ChildProcess | undefined;

/** An OpenAI-compatible decoder: a whole answer when not streamed, an endless stream when streamed. */
function startUpstream(): Promise<void> {
  upstream = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk) => (raw += chunk));
    request.on("end", () => {
      const body = JSON.parse(raw);
      const base = { id: "chatcmpl-local", created: 1, model: body.model };
      if (!body.stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
          }),
        );
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object) => `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
      response.write(chunk({ role: "assistant", content: "" }));
      let n = 0;
      const timer = setInterval(() => response.write(chunk({ content: ` tick${n++}` })), 100);
      response.on("close", () => clearInterval(timer));
    });
  });
  return new Promise((resolve) =>
    upstream.listen(0, "127.0.0.1", () => {
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  receiverUrl = await receiver.listen();
  await startUpstream();
  directory = await mkdtemp(join(tmpdir(), "tollgate-review-sigterm-"));
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await receiver.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await rm(directory, { recursive: true, force: true });
});

describe("SIGTERM on the Node entry", () => {
  it("exports the telemetry of requests already served, even while a stream is still open", async () => {
    const configPath = join(directory, "config.json");
    await writeFile(
      configPath,
      JSON.stringify({
        providers: { local: { type: "openai-compatible", baseUrl: upstreamUrl, pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 } } } },
        routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
        keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
        store: { path: join(directory, "ledger.jsonl") },
      }),
    );
    child = spawn("node", [BIN, "--config", configPath], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 20_000);
      child!.stderr!.on("data", (chunk) => {
        log += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(log);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    expect(log).toContain("OpenTelemetry export is on");
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: APP_KEY, maxRetries: 0 });

    // One request served whole.
    const answer = await client.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] });
    expect(answer.choices[0]?.message.content).toBe("hello");

    // One long stream still running when the restart comes.
    const stream = await client.chat.completions.create({ model: "local", stream: true, messages: [{ role: "user", content: "go on" }] });
    const reading = (async () => {
      try {
        for await (const _ of stream) {
          // keep reading until the gateway goes away
        }
      } catch {
        // the connection is cut when the process exits
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Ctrl-C, then the supervisor's SIGTERM, as a terminal and a supervisor may both send: one stop.
    child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await reading;

    // Whatever the gateway managed to send before it exited has arrived by now (give it a moment).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const metrics = receiver.metrics();
    expect([...metrics.keys()], "metrics exported before exit").toContain("gen_ai.client.token.usage");
    // Both requests are in the ledger: the one served, and the stream cut after the drain.
    const records = (await readFile(join(directory, "ledger.jsonl"), "utf8")).trim().split("\n").map((line) => JSON.parse(line));
    expect(records.map((record) => [record.stream, record.status])).toEqual([
      [false, "ok"],
      [true, "aborted"],
    ]);
  }, 30_000);
});
