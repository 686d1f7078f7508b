import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import { startGateway } from "../src/node/serve.ts";
import { APP_KEY, ledgerRecords, readSseStream, startTestGateway, testConfig, waitForRecord, type TestGateway, temporaryLedgerPath } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { useRedis } from "./support/use-redis.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";

// Every request leaves one exact cost record, however it ended, and the client sees the same
// figures (headers, or the stream's final event). Expected costs are worked out by hand from the
// bundled prices: gpt-4o $2.50 / $1.25 cached / $10 per 1M = 2500 / 1250 / 10,000 nano per token;
// Claude Sonnet 4.6 $3 / $3.75 (5m write) / $6 (1h write) / $0.30 (read) / $15.

let mocks: MockProviders;
let gateway: TestGateway;

// This file reads today's keys on the real clock: keep its run inside one UTC day.
beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);

beforeAll(async () => {
  mocks = startMockProviders();
  const config = testConfig();
  gateway = await startTestGateway({
    ...config,
    routes: { ...config.routes, experimental: { targets: [{ provider: "openai", model: "gpt-9-preview" }] } },
  });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});

function post(path: string, body: object, signal?: AbortSignal) {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

describe("cost records and what the client sees", () => {
  it("OpenAI SDK, not streamed: exact cost in the headers and in the record", async () => {
    mocks.openai.enqueue({ kind: "text", text: "Cached answer.", usage: { prompt_tokens: 1200, completion_tokens: 42, cached_tokens: 1024 } });
    const { response } = await gateway.openai.chat.completions
      .create({ model: "gpt", messages: [{ role: "user", content: "Hello" }] })
      .withResponse();

    // 176 × 2500 + 1024 × 1250 + 42 × 10,000 = 440,000 + 1,280,000 + 420,000 = 2,140,000 nano.
    expect(response.headers.get("x-tollgate-cost-usd")).toBe("0.00214");
    expect(response.headers.get("x-tollgate-input-tokens")).toBe("1200");
    expect(response.headers.get("x-tollgate-cached-tokens")).toBe("1024");
    expect(response.headers.get("x-tollgate-output-tokens")).toBe("42");
    expect(response.headers.get("x-tollgate-cost-flags")).toBeNull();

    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({
      keyId: "app",
      team: "search",
      route: "gpt",
      provider: "openai",
      model: "gpt-4o",
      dialect: "openai",
      stream: false,
      status: "ok",
      httpStatus: 200,
      finishReason: "stop",
      estimated: false,
      unpriced: false,
      usage: { inputTokens: 176, cacheReadTokens: 1024, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 42, reasoningTokens: 0 },
      cost: { inputNano: 440_000, cacheReadNano: 1_280_000, cacheWriteNano: 0, outputNano: 420_000, totalNano: 2_140_000, cacheSavingsNano: 1_280_000 },
    });
    expect(record.ttftMs).toBeGreaterThan(0);
    expect(record.durationMs).toBeGreaterThanOrEqual(record.ttftMs!);
  });

  it("OpenAI stream without include_usage: usage is asked upstream, kept from the client, and in the record", async () => {
    mocks.openai.enqueue({ kind: "text", chunks: ["Hi", " there"], usage: { prompt_tokens: 300, completion_tokens: 7, reasoning_tokens: 3 } });
    const response = await post("/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "Hello" }] });
    const { events, summary } = await readSseStream(response);

    expect(mocks.openai.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    const chunks = events.filter((event) => event.data.startsWith("{")).map((event) => JSON.parse(event.data));
    expect(chunks.some((chunk) => "usage" in chunk)).toBe(false);

    // 300 × 2500 + 7 × 10,000 = 750,000 + 70,000 = 820,000 nano.
    expect(summary).toMatchObject({ costUsd: "0.00082", inputTokens: 300, outputTokens: 7, estimated: false, unpriced: false });
    const record = await waitForRecord(gateway, summary!.requestId);
    expect(record).toMatchObject({ stream: true, status: "ok", usage: { outputTokens: 7, reasoningTokens: 3 }, cost: { totalNano: 820_000 } });
    expect(record.ttftMs).not.toBeNull();
    expect(record.upstreamTtftMs).not.toBeNull();
  });

  it("Anthropic SDK, streamed: 5-minute and 1-hour cache writes and reads, priced separately", async () => {
    mocks.anthropic.enqueue({
      kind: "text",
      text: "Cached.",
      usage: {
        input_tokens: 50,
        output_tokens: 400,
        cache_read_input_tokens: 10_000,
        cache_creation_input_tokens: 3000,
        cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 },
      },
    });
    const { data: stream, response } = await gateway.anthropic.messages
      .create({ model: "claude", max_tokens: 500, stream: true, messages: [{ role: "user", content: "Hello" }] })
      .withResponse();
    for await (const _event of stream) {
      // drain
    }
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    // 50 × 3000 = 150,000; 10,000 × 300 = 3,000,000; 2000 × 3750 + 1000 × 6000 = 13,500,000; 400 × 15,000 = 6,000,000.
    expect(record.usage).toEqual({ inputTokens: 50, cacheReadTokens: 10_000, cacheWrite5mTokens: 2000, cacheWrite1hTokens: 1000, outputTokens: 400, reasoningTokens: 0 });
    expect(record.cost).toEqual({
      inputNano: 150_000,
      cacheReadNano: 3_000_000,
      cacheWriteNano: 13_500_000,
      outputNano: 6_000_000,
      totalNano: 22_650_000,
      cacheSavingsNano: 27_000_000,
    });
    expect(record).toMatchObject({ dialect: "anthropic", provider: "anthropic", model: "claude-sonnet-4-6", status: "ok", finishReason: "stop" });
  });

  it("a stream the client aborts is billed for the tokens generated up to the abort, flagged estimated", async () => {
    mocks.openai.enqueue({ kind: "endless", delayMsBetweenChunks: 150 });
    const client = new AbortController();
    const response = await post("/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "Count for me" }] }, client.signal);
    const requestId = response.headers.get("x-tollgate-request-id")!;
    const reader = response.body!.getReader();
    let received = "";
    while (!received.includes("tick2")) received += new TextDecoder().decode((await reader.read()).value);
    client.abort();

    const record = await waitForRecord(gateway, requestId);
    // What came back before the abort: "tick0 tick1 tick2" (the next tick was 150 ms away).
    const encoder = new Tiktoken(o200kBase);
    const outputTokens = encoder.encode("tick0 tick1 tick2").length;
    // No usage came from OpenAI; the prompt is counted: 3 per message + the text + 3 to prime the reply.
    const inputTokens = 3 + encoder.encode("Count for me").length + 3;
    expect(record).toMatchObject({ status: "aborted", estimated: true, usage: { inputTokens, outputTokens } });
    expect(record.cost.totalNano).toBe(inputTokens * 2500 + outputTokens * 10_000);
  });

  it("a provider failure leaves one zero-cost error record; a bad request leaves none", async () => {
    mocks.openai.enqueue({ kind: "http-error", status: 500, message: "boom" });
    const failed = await post("/v1/chat/completions", { model: "gpt", messages: [{ role: "user", content: "Hello" }] });
    expect(failed.status).toBe(502);
    const record = await waitForRecord(gateway, failed.headers.get("x-tollgate-request-id")!);
    expect(record).toMatchObject({ status: "error", httpStatus: 502, estimated: false, cost: { totalNano: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });

    const bad = await post("/v1/chat/completions", { model: "gpt", messages: "not a list" });
    expect(bad.status).toBe(400);
    await expect(waitForRecord(gateway, bad.headers.get("x-tollgate-request-id")!, 300)).rejects.toThrow(/no cost record/);
  });

  it("a model with no price is flagged unpriced, never a silent $0", async () => {
    mocks.openai.enqueue({ kind: "text", usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const response = await post("/v1/chat/completions", { model: "experimental", messages: [{ role: "user", content: "Hello" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-cost-flags")).toBe("unpriced");
    const record = await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.unpriced).toBe(true);
    expect(record.warnings.join()).toMatch(/no price for model "gpt-9-preview" on provider "openai".*providers\.openai\.pricing\.models/);
  });
});

describe("ledger stores behind a running gateway", () => {
  it("the embedded file ledger keeps records across a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tollgate-restart-"));
    const config = { ...testConfig(), store: { path: join(dir, "ledger.jsonl") } };
    const ids: string[] = [];
    for (let run = 0; run < 2; run++) {
      const restarted = await startTestGateway(config);
      const response = await fetch(`${restarted.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "Hello" }] }),
      });
      ids.push(response.headers.get("x-tollgate-request-id")!);
      await waitForRecord(restarted, ids.at(-1)!);
      await restarted.close();
    }
    const reopened = await startTestGateway(config);
    expect((await ledgerRecords(reopened)).map((record) => record.requestId)).toEqual(ids);
    await reopened.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe("Redis (real redis-server)", () => {
    const rig = useRedis("e2e-ledger");

    it("writes each request's record and its day's aggregates", async () => {
      const redisGateway = await startGateway({
        config: { ...testConfig(), store: { redisUrl: { env: "TOLLGATE_TEST_REDIS" }, keyPrefix: rig.prefix, path: temporaryLedgerPath() } },
        port: 0,
        upstreamTransport: "fetch",
        env: { OPENAI_API_KEY: "sk-test-openai", ANTHROPIC_API_KEY: "sk-ant-test", TOLLGATE_TEST_REDIS: rig.url },
        log: () => {},
      });
      try {
        mocks.openai.enqueue(
          { kind: "text", usage: { prompt_tokens: 100, completion_tokens: 10 } },
          { kind: "text", usage: { prompt_tokens: 200, completion_tokens: 20, cached_tokens: 100 } },
        );
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          const response = await fetch(`${redisGateway.url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "gpt", messages: [{ role: "user", content: "Hello" }] }),
          });
          expect(response.status).toBe(200);
          ids.push(response.headers.get("x-tollgate-request-id")!);
        }
        await redisGateway.ledger.flush();
        const day = new Date().toISOString().slice(0, 10);
        const reader = new RedisLedgerStore(rig.redis, rig.prefix);
        expect((await reader.records(day)).map((record) => record.requestId)).toEqual(expect.arrayContaining(ids));
        const totals = (await reader.totals(day)).filter((total) => total.dimensions.route === "gpt" && total.dimensions.keyId === "app");
        const metric = (name: string) => totals.find((total) => total.metric === name)?.value;
        // 100 × 2500 + 10 × 10,000 = 350,000; 100 × 2500 + 100 × 1250 + 20 × 10,000 = 575,000.
        expect(metric("requests")).toBe(2);
        expect(metric("cost_nano")).toBe(925_000);
        expect(metric("input_tokens")).toBe(200);
        expect(metric("cache_read_tokens")).toBe(100);
        expect(metric("output_tokens")).toBe(30);
      } finally {
        await redisGateway.close();
      }
    });
  });
});
