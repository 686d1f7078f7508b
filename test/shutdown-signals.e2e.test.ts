import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../src/node/serve.ts";
import { formatUsd } from "../src/pricing/format-usd.ts";
import { APP_KEY, readSseStream, sha256 } from "./support/gateway.ts";
import { spawnGateway, startUpstream } from "./support/ops-rig.ts";
import { wireTap } from "./support/wire-tap.ts";

// The real CLI (node bin/tollgate.mjs) stopped by its supervisor while answers are in flight.
// - A second SIGTERM (a supervisor repeating its stop, `kill` run twice) used to find no
//   listener (`process.once`) and took Node's default: the process died mid-drain, and the
//   stream it was cutting was never recorded nor its budget settled.
// - An answer that is not streamed was cut with the streams at 8 s: the client's SDK retries a
//   cut connection, and the provider is paid twice on every rolling deploy. It gets longer now.
// - A stream still running at the stream drain's end had its connection closed: the SDKs threw
//   "terminated", which reads as a network fault. It ends with an error event now.
// The drains are the config's (by default 8 s for streams, 15 s for the rest), shortened here to
// 2 s and 7 s so that the cases take seconds, not half a minute each.

let directory = "";
const kills: (() => void)[] = [];
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "tollgate-shutdown-signals-"));
});
afterAll(async () => {
  for (const kill of kills) kill();
  await rm(directory, { recursive: true, force: true });
});

const configFor = (upstreamUrl: string, ledgerPath: string) => ({
  providers: { local: { type: "openai-compatible", baseUrl: upstreamUrl, pricing: { default: { inputPerMillion: 1, outputPerMillion: 2 } } } },
  routes: { local: { targets: [{ provider: "local", model: "tiny" }] } },
  keys: [{ id: "app", team: "search", hash: sha256(APP_KEY) }],
  store: { path: ledgerPath },
  server: { drainStreamsSeconds: 2, drainAnswersSeconds: 7 },
});

const recordsIn = async (path: string) => (existsSync(path) ? (await readFile(path, "utf8")).trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as { stream: boolean; status: string; errorType?: string }) : []);

describe("stop signals while answers are in flight", () => {
  it("SIGTERM twice: the drain finishes, the cut stream ends with an error event and is recorded, exit 0", async () => {
    const upstream = await startUpstream(); // streams that never end: a token every 100 ms
    const ledgerPath = join(directory, "twice.jsonl");
    const gateway = await spawnGateway(directory, "twice", configFor(upstream.url, ledgerPath));
    kills.push(() => gateway.child.kill("SIGKILL"), () => void upstream.close());
    const tap = wireTap();
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0, fetch: tap.fetch });
    const stream = await client.chat.completions.create({ model: "local", stream: true, messages: [{ role: "user", content: "go on" }] });
    const reading = (async () => {
      try {
        for await (const _ of stream); // until the gateway cuts it
        return "ended as if complete";
      } catch (error) {
        return error;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    gateway.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    gateway.child.kill("SIGTERM"); // while the first stop waits its 2 s for the stream
    const outcome = await gateway.exited;
    // The client is told why in its dialect (an error event the SDK raises), not left with a
    // broken connection it would take for a network fault.
    const failure = await reading;
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain("tollgate is shutting down and cut this stream off; send the request again");
    expect({ code: outcome.code, signal: outcome.signal }).toEqual({ code: 0, signal: null });
    const records = await recordsIn(ledgerPath);
    expect(records.map((record) => [record.stream, record.status, record.errorType])).toEqual([[true, "error", "gateway_stopping"]]);
    // The tokens streamed before the cut are billed ($1 / $2 per 1M: 1,000 and 2,000 nano-dollars a token).
    const [{ usage, cost, estimated }] = records as unknown as [{ usage: { inputTokens: number; outputTokens: number }; cost: { totalNano: number }; estimated: boolean }];
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect({ estimated, totalNano: cost.totalNano }).toEqual({ estimated: true, totalNano: usage.inputTokens * 1_000 + usage.outputTokens * 2_000 });
    // After the error event, the stream still says what it cost: the record's figures, estimated.
    const { summary } = await readSseStream(new Response(await tap.lastBody()));
    expect(summary).toMatchObject({ costUsd: formatUsd(cost.totalNano), outputTokens: usage.outputTokens, estimated: true });
  }, 40_000);

  it("an answer not streamed, 5 s long, is answered after SIGTERM (the 2 s cut is for streams), then exit 0", async () => {
    const upstream = await startUpstream({ wholeDelayMs: 5_000 });
    const ledgerPath = join(directory, "whole.jsonl");
    const gateway = await spawnGateway(directory, "whole", configFor(upstream.url, ledgerPath));
    kills.push(() => gateway.child.kill("SIGKILL"), () => void upstream.close());
    const answer = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "a long answer, please" }] }),
    }).then(
      async (response) => ({ status: response.status, content: ((await response.json()) as { choices?: { message: { content: string } }[] }).choices?.[0]?.message.content }),
      (error: Error) => ({ status: 0, content: `connection cut: ${(error.cause as Error | undefined)?.message ?? error.message}` }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    gateway.child.kill("SIGTERM");
    expect(await answer).toEqual({ status: 200, content: "hello" });
    expect((await gateway.exited).code).toBe(0);
    expect((await recordsIn(ledgerPath)).map((record) => [record.stream, record.status])).toEqual([[false, "ok"]]);
  }, 40_000);

  it("a stream whose answer begins after the 2 s is cut as it begins, not held with the answers not streamed", async () => {
    // Its SSE headers go out with its first part (at 3.5 s here): the streams were looked for once,
    // at the stream drain's end, and this one ran on until the cut meant for answers not streamed
    // (found by review).
    const upstream = await startUpstream({ chunks: 0, everyMs: 3_500 }); // the role chunk, then a token every 3.5 s
    const gateway = await spawnGateway(directory, "late", configFor(upstream.url, join(directory, "late.jsonl")));
    kills.push(() => gateway.child.kill("SIGKILL"), () => void upstream.close());
    const sent = Date.now();
    const ended = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", stream: true, messages: [{ role: "user", content: "hi" }] }),
    })
      .then((response) => response.text())
      .catch(() => "")
      .then(() => Date.now() - sent);
    await new Promise((resolve) => setTimeout(resolve, 300));
    gateway.child.kill("SIGTERM");
    // Its first token comes at 3.5 s, and it is cut within 250 ms of it; the answers not streamed are cut at 7 s.
    expect(await ended).toBeLessThan(6_000);
    expect((await gateway.exited).code).toBe(0);
  }, 60_000);
});

describe("the stop signal of a gateway with many streams running", () => {
  // Each running stream listens to the one stop signal; Node warned of a leak past 10 listeners
  // ("MaxListenersExceededWarning: Possible EventTarget memory leak detected") on any busy gateway.
  it("raises no warning with 12 streams running", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const upstream = await startUpstream(); // endless streams
    const gateway = await startGateway({ config: configFor(upstream.url, join(directory, "many.jsonl")), port: 0, log: () => {} });
    try {
      const leave = new AbortController();
      const streams = await Promise.all(
        Array.from({ length: 12 }, () =>
          fetch(`${gateway.url}/v1/chat/completions`, {
            method: "POST",
            signal: leave.signal,
            headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "local", stream: true, messages: [{ role: "user", content: "go on" }] }),
          }),
        ),
      );
      expect(streams.map((stream) => stream.status)).toEqual(Array(12).fill(200));
      leave.abort();
    } finally {
      await gateway.close({ drainMs: 0 });
      await upstream.close();
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  }, 30_000);
});
