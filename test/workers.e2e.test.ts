import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSseStream, sha256 } from "./support/gateway.ts";
import { until } from "./support/until.ts";
import { bundleWorker, costRecordsInLog, startEdgeUpstream, type EdgeUpstream, type WorkerBundle, workerLog } from "./support/workers.ts";

// The Workers entry in Cloudflare's real runtime (workerd, through Miniflare): the same gateway,
// bundled the way a Worker is, answering both dialects from an OpenAI-compatible upstream.
// This is what keeps src/ runtime-neutral: a Node-only API in the core fails here.

const EDGE_KEY = "tg_edge_key_0123456789";
const IDLE_LIMIT_MS = 1_000;
let upstream: EdgeUpstream;
let miniflare: Miniflare;
let bundle: WorkerBundle;
/** What the Worker wrote to its log (workerd's stdout): cost records are lines there. */
const log = workerLog();

beforeAll(async () => {
  upstream = await startEdgeUpstream();
  bundle = await bundleWorker();
  const config = {
    providers: {
      local: { type: "openai-compatible", baseUrl: upstream.url, pricing: { default: { inputPerMillion: 1, outputPerMillion: 4 } } },
      // The same upstream, with a short limit on silence mid-stream.
      impatient: { type: "openai-compatible", baseUrl: upstream.url, streamIdleTimeoutMs: IDLE_LIMIT_MS, pricing: { default: { inputPerMillion: 1, outputPerMillion: 4 } } },
    },
    routes: {
      local: { targets: [{ provider: "local", model: "edge-model" }] },
      brief: { targets: [{ provider: "local", model: "brief-model" }] },
      stalls: { targets: [{ provider: "impatient", model: "stall-model" }] },
    },
    keys: [{ id: "edge", team: "edge", hash: sha256(EDGE_KEY) }],
    // Keep-alive clocks shorter than any other limit: the first stream's clocks set the pace.
    server: { streamKeepAliveSeconds: 0.3 },
  };
  miniflare = new Miniflare({
    ...bundle.options,
    bindings: { TOLLGATE_CONFIG: JSON.stringify(config) },
    handleRuntimeStdio: log.handleRuntimeStdio,
  });
});

afterAll(async () => {
  await miniflare?.dispose();
  upstream?.close();
  bundle?.remove();
});


describe("the Workers entry on workerd", () => {
  it("serves healthz and refuses a bad key in the client's dialect", async () => {
    expect(await (await miniflare.dispatchFetch("http://gateway/healthz")).json()).toEqual({ status: "ok", providers: { local: "ready", impatient: "ready" }, ledger: { writes: "ok", pendingRecords: 0 }, budgets: { store: "ok" } });
    // A GET: Miniflare's own fetch client (undici) cannot replay a request body after a 401.
    const denied = await miniflare.dispatchFetch("http://gateway/v1/models", { headers: { authorization: "Bearer nope" } });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: { type: "authentication_error", code: "invalid_api_key" } });
  });

  it("serves the admin dashboard's page and assets, with their Content-Security-Policy", async () => {
    for (const [path, type] of [["/admin", "text/html"], ["/admin/dashboard.js", "text/javascript"], ["/admin/dashboard.css", "text/css"]] as const) {
      const response = await miniflare.dispatchFetch(`http://gateway${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain(type);
      expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
      await response.text();
    }
  });

  it("answers an OpenAI-dialect request with the upstream's text, usage and headers", async () => {
    const response = await miniflare.dispatchFetch("http://gateway/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-output-tokens")).toBe("3");
    // $1 / $4 per 1M: 4 × 1000 + 3 × 4000 = 16,000 nano-dollars.
    expect(response.headers.get("x-tollgate-cost-usd")).toBe("0.000016");
    const body = (await response.json()) as { choices: { message: { content: string } }[]; usage: { total_tokens: number } };
    expect(body.choices[0]!.message.content).toBe("from the edge");
    expect(body.usage.total_tokens).toBe(7);

    // Its cost record is one JSON line in the Worker's log, the same figures as the headers.
    const requestId = response.headers.get("x-tollgate-request-id")!;
    const record = await until(
      () => costRecordsInLog(log.text()).find((line) => line.requestId === requestId),
      () => `its cost record in the Worker's log, which said:\n${log.text().slice(-2_000)}`,
    );
    expect(record).toMatchObject({
      keyId: "edge",
      route: "local",
      provider: "local",
      status: "ok",
      usage: { inputTokens: 4, outputTokens: 3 },
      cost: { inputNano: 4_000, outputNano: 12_000, totalNano: 16_000 },
    });
  });

  it("counts tokens for an Anthropic client with the edge's byte estimate (no tokenizer on Workers)", async () => {
    const response = await miniflare.dispatchFetch("http://gateway/v1/messages/count_tokens", {
      method: "POST",
      headers: { "x-api-key": EDGE_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "Hello there" }] }),
    });
    expect(response.status).toBe(200);
    // 11 bytes ÷ 4, rounded up: 3; + 3 for the message + 3 priming the reply.
    expect(await response.json()).toEqual({ input_tokens: 9 });
    expect(response.headers.get("x-tollgate-estimated")).toBe("true");
  });

  it("streams an Anthropic-dialect answer as Messages events", async () => {
    const response = await miniflare.dispatchFetch("http://gateway/v1/messages", {
      method: "POST",
      headers: { "x-api-key": EDGE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const { events, summary } = await readSseStream(response as unknown as Response);
    const text = events
      .filter((event) => event.event === "content_block_delta")
      .map((event) => JSON.parse(event.data).delta.text)
      .join("");
    expect(text).toBe("streamed at the edge");
    expect(events.find((event) => event.event === "message_delta")!.data).toContain('"output_tokens":3');
    expect(events.at(-1)?.event).toBe("message_stop");
    expect(summary).toMatchObject({ costUsd: "0.000016", inputTokens: 4, outputTokens: 3 });
  });

  it("cuts a stream that goes silent even after the stream that started the clocks has ended (a Worker's timers die with their request)", async () => {
    const stream = (route: string, signal?: AbortSignal) =>
      miniflare.dispatchFetch("http://gateway/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: route, stream: true, messages: [{ role: "user", content: "hi" }] }),
        ...(signal ? { signal } : {}),
      });
    const first = await stream("brief"); // its clock is the isolate's first; it ends in BRIEF_STREAM_MS
    const giveUp = AbortSignal.timeout(IDLE_LIMIT_MS * 6);
    const second = await stream("stalls", giveUp); // goes silent after its first piece
    expect(await first.text()).toContain("data: [DONE]");
    const text = await second.text().catch((error: Error) => `client gave up: ${error.message}`);
    expect(text).toContain(`went silent for ${IDLE_LIMIT_MS} ms mid-stream; the stream was cut off`);
  }, 20_000);
});
