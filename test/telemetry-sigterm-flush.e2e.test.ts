// SIGTERM on the Node entry (src/node/main.ts): in-flight answers get 8 s, then the streams
// still open are cut, and the ledger and the OpenTelemetry export are written out before exit.
// close() used to wait for every connection first, so one long stream held it until the forced
// exit and every metric not yet exported (the periodic export is every 60 s) was lost.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP_KEY, sha256 } from "./support/gateway.ts";
import { spawnGateway, startUpstream } from "./support/ops-rig.ts";
import { createOtlpReceiver } from "./support/otlp-receiver.ts";


const receiver = createOtlpReceiver();
let receiverUrl = "";
let upstream: Awaited<ReturnType<typeof startUpstream>> | undefined;
let directory = "";
let child: ChildProcess | undefined;

beforeAll(async () => {
  receiverUrl = await receiver.listen();
  upstream = await startUpstream(); // a whole answer when not streamed, an endless stream when streamed
  directory = await mkdtemp(join(tmpdir(), "tollgate-review-sigterm-"));
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await receiver.close();
  await upstream?.close();
  await rm(directory, { recursive: true, force: true });
});

describe("SIGTERM on the Node entry", () => {
  it("exports the telemetry of requests already served, even while a stream is still open", async () => {
    const gateway = await spawnGateway(
      directory,
      "config",
      {
        providers: { local: { type: "openai-compatible", baseUrl: upstream!.url, pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 } } } },
        routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
        keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
        store: { path: join(directory, "ledger.jsonl") },
      },
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl },
    );
    child = gateway.child;
    const { url } = gateway;
    const log = gateway.log();
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
        // the gateway ends it with an error event when it stops
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Ctrl-C, then the supervisor's SIGTERM, as a terminal and a supervisor may both send: one stop.
    child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill("SIGTERM");
    expect((await gateway.exited).code).toBe(0);
    await reading;

    // Whatever the gateway managed to send before it exited has arrived by now (give it a moment).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const metrics = receiver.metrics();
    expect([...metrics.keys()], "metrics exported before exit").toContain("gen_ai.client.token.usage");
    // Both requests are in the ledger: the one served, and the stream cut after the drain (which
    // ends with an error event saying the gateway stopped).
    const records = (await readFile(join(directory, "ledger.jsonl"), "utf8")).trim().split("\n").map((line) => JSON.parse(line));
    expect(records.map((record) => [record.stream, record.status, record.errorType])).toEqual([
      [false, "ok", undefined],
      [true, "error", "gateway_stopping"],
    ]);
  }, 30_000);
});
