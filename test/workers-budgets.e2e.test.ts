import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "./support/gateway.ts";
import { bundleWorker, SLOW_STREAM_MS, startEdgeUpstream, type EdgeUpstream, type WorkerBundle } from "./support/workers.ts";

// Budgets on Workers, in workerd: two Workers (two isolates, two gateways each with its own
// memory) share the TollgateBudgets Durable Object, as every isolate of one deployed Worker does.
// Concurrent requests through both must never spend past the limit, and the spend must survive
// the runtime restarting (the object's storage is kept on disk here).

const EDGE_KEY = "tg_edge_key_0123456789";
/** $1 / $4 per 1M tokens; the upstream bills 4 + 3 tokens: 16,000 nano-dollars a request. */
const COST_NANO = 16_000;
const LIMIT_USD = 0.0002;
const RESERVATION_TTL_SECONDS = 3;

let upstream: EdgeUpstream;
let bundle: WorkerBundle;
let persistDir: string;

function startRuntime(): Miniflare {
  const config = {
    providers: { local: { type: "openai-compatible", baseUrl: upstream.url, pricing: { default: { inputPerMillion: 1, outputPerMillion: 4 } } } },
    routes: {
      budgeted: { targets: [{ provider: "local", model: "edge-model" }], budget: { usd: LIMIT_USD, window: "total" } },
      slow: { targets: [{ provider: "local", model: "slow-model" }], budget: { usd: 1, window: "total" } },
    },
    // Renewed every second; a stream of SLOW_STREAM_MS outlives two TTLs.
    server: { reservationTtlSeconds: RESERVATION_TTL_SECONDS },
    keys: [{ id: "edge", team: "edge", hash: sha256(EDGE_KEY) }],
  };
  const worker = (name: string, durableObject: string | { className: string; scriptName: string }) => ({
    name,
    ...bundle.options,
    bindings: { TOLLGATE_CONFIG: JSON.stringify(config) },
    durableObjects: { TOLLGATE_BUDGETS: durableObject },
  });
  return new Miniflare({
    durableObjectsPersist: persistDir,
    // The Workers' log carries a cost record per request; this test reads the budget instead.
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.resume();
      stderr.resume();
    },
    workers: [worker("edge-a", { className: "TollgateBudgets", scriptName: "edge-a" }), worker("edge-b", { className: "TollgateBudgets", scriptName: "edge-a" })],
  });
}

type Fetcher = { fetch(url: string, init?: RequestInit): Promise<Response> };
const workerOf = async (runtime: Miniflare, name: string) => (await runtime.getWorker(name)) as unknown as Fetcher;

async function ask(runtime: Miniflare, workerName: string): Promise<Response> {
  const worker = await workerOf(runtime, workerName);
  return (await worker.fetch("http://gateway/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "budgeted", max_tokens: 3, messages: [{ role: "user", content: "hi" }] }),
  })) as unknown as Response;
}

type BudgetScope = { scope: string; limitUsd: number; spentUsd: number; reservedUsd: number };

async function budgetOf(runtime: Miniflare, workerName: string, route = "budgeted"): Promise<BudgetScope> {
  const worker = await workerOf(runtime, workerName);
  const response = (await worker.fetch("http://gateway/v1/budgets", { headers: { authorization: `Bearer ${EDGE_KEY}` } })) as unknown as Response;
  const body = (await response.json()) as { scopes: BudgetScope[] };
  return body.scopes.find((scope) => scope.scope === `route:${route}`)!;
}

beforeAll(async () => {
  upstream = await startEdgeUpstream();
  bundle = await bundleWorker();
  persistDir = mkdtempSync(join(tmpdir(), "tollgate-budgets-object-"));
});

afterAll(() => {
  upstream?.close();
  bundle?.remove();
  if (persistDir) rmSync(persistDir, { recursive: true, force: true });
});

describe("budgets on Workers (the TollgateBudgets Durable Object)", () => {
  it("hold across isolates under concurrency, settle to the exact cost, and survive a restart", async () => {
    const runtime = startRuntime();
    let served: number;
    try {
      // 30 requests at once, alternating between the two Workers.
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => ask(runtime, i % 2 === 0 ? "edge-a" : "edge-b")));
      const statuses = responses.map((response) => response.status);
      await Promise.all(responses.map((response) => response.arrayBuffer()));
      served = statuses.filter((status) => status === 200).length;
      expect(statuses.every((status) => status === 200 || status === 402)).toBe(true);
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThan(30);
      // Spend within the limit, nothing left reserved, and exactly what the served requests cost,
      // seen the same from either Worker.
      const fromA = await budgetOf(runtime, "edge-a");
      expect(fromA).toMatchObject({ limitUsd: LIMIT_USD, reservedUsd: 0 });
      expect(Math.round(fromA.spentUsd * 1e9)).toBe(served * COST_NANO);
      expect(fromA.spentUsd).toBeLessThanOrEqual(LIMIT_USD);
      expect(await budgetOf(runtime, "edge-b")).toEqual(fromA);
    } finally {
      await runtime.dispose();
    }

    const restarted = startRuntime();
    try {
      expect(Math.round((await budgetOf(restarted, "edge-b")).spentUsd * 1e9)).toBe(served * COST_NANO);
    } finally {
      await restarted.dispose();
    }
  }, 60_000);

  it("keep a stream's reservation while it runs past twice the TTL, renewed from the Worker", async () => {
    expect(SLOW_STREAM_MS).toBeGreaterThan(2 * RESERVATION_TTL_SECONDS * 1000);
    const runtime = startRuntime();
    try {
      const worker = await workerOf(runtime, "edge-a");
      // A short request first, so that the isolate's renewal timer is started by a request that
      // has ended by the time the stream needs it.
      expect((await ask(runtime, "edge-a")).status).toBe(200);
      const streaming = worker.fetch("http://gateway/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "slow", max_tokens: 3, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      const response = await streaming;
      const body = response.text();
      // Past two TTLs: without renewal the object would have freed the reservation by now.
      await new Promise((resolve) => setTimeout(resolve, 2 * RESERVATION_TTL_SECONDS * 1000 + 500));
      const during = await budgetOf(runtime, "edge-b", "slow");
      expect(during.reservedUsd).toBeGreaterThan(0);
      expect(await body).toContain("data: [DONE]");
      const after = await budgetOf(runtime, "edge-b", "slow");
      expect(after).toMatchObject({ reservedUsd: 0 });
      expect(Math.round(after.spentUsd * 1e9)).toBe(COST_NANO);
    } finally {
      await runtime.dispose();
    }
  }, 60_000);
});
