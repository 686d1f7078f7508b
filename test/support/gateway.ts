// Starts a real tollgate (Node server on a free port) for end-to-end tests, in front of the msw
// cloud mocks and, where one is given, a real llama-server. The msw server must already listen:
// the SDKs inside the gateway pick up `fetch` when their clients are built.
import type { StreamSummary } from "../../src/dialects/stream-summary.ts";
import { createHash, randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startMockProviders, type MockProviders } from "./msw/index.ts";
import { startGateway, type RunningGateway } from "../../src/node/serve.ts";
import { FileLedgerStore, readLedgerFile } from "../../src/ledger/file-ledger-store.ts";
import type { CostRecord } from "../../src/metering/cost-record.ts";

export const APP_KEY = "tg_test_app_key_0123456789";
export const LIMITED_KEY = "tg_test_limited_key_0123456789";
export const ADMIN_KEY = "tg_test_admin_key_0123456789";
export const OPENAI_KEY = "sk-test-openai";
export const ANTHROPIC_KEY = "sk-ant-test";

export const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** Routes every test can use: one per provider, and a fallback route from OpenAI to Anthropic. */
export function testConfig(localBaseUrl?: string) {
  return {
    providers: {
      openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" } },
      anthropic: { type: "anthropic", apiKey: { env: "ANTHROPIC_API_KEY" } },
      ...(localBaseUrl
        ? {
            local: {
              type: "openai-compatible",
              baseUrl: localBaseUrl,
              // $2 per GPU hour at 5000 prompt / 100 generated tokens per second.
              pricing: { default: { gpuHourUsd: 2, inputTokensPerSecond: 5000, outputTokensPerSecond: 100 } },
            },
          }
        : {}),
    },
    routes: {
      gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] },
      claude: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }] },
      "gpt-then-claude": {
        targets: [
          { provider: "openai", model: "gpt-4o" },
          { provider: "anthropic", model: "claude-sonnet-4-6" },
        ],
      },
      ...(localBaseUrl ? { local: { targets: [{ provider: "local", model: "tiny-local" }] } } : {}),
    },
    keys: [
      { id: "app", team: "search", hash: sha256(APP_KEY) },
      { id: "limited", team: "billing", hash: sha256(LIMITED_KEY), routes: ["gpt"] },
    ],
    admin: { keyHash: sha256(ADMIN_KEY) },
    server: { maxBodyBytes: 64 * 1024 },
  };
}

export type TestGateway = RunningGateway & { openai: OpenAI; anthropic: Anthropic };

/**
 * `fetch` transport so msw can answer for the clouds; tests against real servers only (the local
 * decoder) pass `undici`, the production transport.
 */
export async function startTestGateway(config: unknown = testConfig(), upstreamTransport: "undici" | "fetch" = "fetch"): Promise<TestGateway> {
  const gateway = await startGateway({
    config: withTemporaryLedger(config),
    port: 0,
    upstreamTransport,
    env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    log: () => {},
  });
  return {
    ...gateway,
    // The official SDKs as a platform team's apps would use them: only baseURL and key change.
    openai: new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: gateway.url, apiKey: APP_KEY, maxRetries: 0 }),
  };
}

/** Each test gateway writes its cost records to a file of its own, never to the working directory. */
function withTemporaryLedger(config: unknown): unknown {
  const withStore = config as { store?: unknown };
  if (withStore.store) return config;
  return { ...withStore, store: { path: temporaryLedgerPath() } };
}

/**
 * `count` gateways on one real Redis (`redis`: its URL, this file's key prefix, and whether it is
 * a Redis Cluster), as a platform runs several instances: each with the test config's provider
 * keys and a temporary directory of its own for kept records. The caller closes them.
 */
export async function startGatewaysOnRedis(count: number, config: Record<string, unknown>, redis: { url: string; prefix: string; cluster?: boolean }): Promise<RunningGateway[]> {
  const gateways: RunningGateway[] = [];
  for (let i = 0; i < count; i++) {
    gateways.push(
      await startGateway({
        config: { ...config, store: { redisUrl: { env: "TEST_REDIS_URL" }, keyPrefix: redis.prefix, path: temporaryLedgerPath(), cluster: redis.cluster ?? false } },
        port: 0,
        upstreamTransport: "fetch",
        env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, TEST_REDIS_URL: redis.url },
        log: () => {},
      }),
    );
  }
  return gateways;
}

/**
 * A ledger path in a fresh temporary directory. A Redis-backed test gateway needs one too: it
 * keeps the records it could not write at close beside it, and replays what it finds there at
 * start, which must never be another test's (or the working directory's `.tollgate/`).
 */
export function temporaryLedgerPath(): string {
  return join(tmpdir(), `tollgate-test-${randomUUID()}`, "ledger.jsonl");
}

/** Raw SSE events of a response body, for assertions on framing the SDKs hide. */
export async function readSseEvents(response: Response): Promise<{ event?: string; data: string }[]> {
  return parseSseEvents(await response.text());
}

/** A stream's events, and the summary tollgate ends it with (an SSE comment line, src/dialects/stream-summary.ts). */
export async function readSseStream(response: Response): Promise<{ events: { event?: string; data: string }[]; summary: StreamSummary | undefined; text: string }> {
  const text = await response.text();
  return { events: parseSseEvents(text), summary: readSummaryComment(text), text };
}

/** The summary comment line a stream ends with (src/dialects/stream-summary.ts); undefined where there is none. */
function readSummaryComment(streamText: string): StreamSummary | undefined {
  const line = /^: tollgate (\{.*\})$/m.exec(streamText)?.[1];
  return line === undefined ? undefined : (JSON.parse(line) as StreamSummary);
}

/** The events of an SSE text; comment-only blocks (keep-alives, the summary) are not events. */
function parseSseEvents(text: string): { event?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block.split("\n").some((line) => line !== "" && !line.startsWith(":")))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      return event === undefined ? { data } : { event, data };
    });
}

export type MockedGateway = { mocks: MockProviders; gateway: TestGateway };

/**
 * The usual rig of an end-to-end test file: msw stand-ins for both clouds, then a gateway in front
 * of them (the test config, plus `routes` and `keys` of the file's own), reset between tests and
 * closed after the file. Fields are filled in by beforeAll.
 */
export function useMockedGateway(routes: Record<string, unknown> = {}, keys: unknown[] = [], providerSettings: { openai?: object; anthropic?: object } = {}): MockedGateway {
  const rig = {} as MockedGateway;
  beforeAll(async () => {
    rig.mocks = startMockProviders();
    const base = testConfig();
    const providers = {
      ...base.providers,
      openai: { ...base.providers.openai, ...providerSettings.openai },
      anthropic: { ...base.providers.anthropic, ...providerSettings.anthropic },
    };
    rig.gateway = await startTestGateway({ ...base, providers, routes: { ...base.routes, ...routes }, keys: [...base.keys, ...keys] });
  });
  afterEach(() => {
    rig.mocks.openai.reset();
    rig.mocks.anthropic.reset();
  });
  afterAll(async () => {
    await rig.gateway.close();
    rig.mocks.close();
  });
  return rig;
}

/** A JSON POST to the gateway as a client with `key` would send it (Bearer works for both dialects). */
export function postJson(gateway: RunningGateway, path: string, body: unknown, key = APP_KEY): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The cost record of one request, once the gateway has written it (records land after the response). */
export async function waitForRecord(gateway: RunningGateway, requestId: string, timeoutMs = 5000): Promise<CostRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await gateway.ledger.flush();
    const found = (await ledgerRecords(gateway)).find((record) => record.requestId === requestId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no cost record for ${requestId} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every record the gateway's embedded file ledger holds. */
export async function ledgerRecords(gateway: RunningGateway): Promise<CostRecord[]> {
  if (!(gateway.store instanceof FileLedgerStore)) throw new Error("this helper reads the file ledger; the gateway uses another store");
  return readLedgerFile(gateway.store.path).catch(() => []);
}
