import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "./support/gateway.ts";
import { until } from "./support/until.ts";
import { bundleWorker, costRecordsInLog, DRIP_TOKENS, startEdgeUpstream, type EdgeUpstream, type WorkerBundle, workerLog } from "./support/workers.ts";

// A client that leaves half-way through a stream, on workerd with wrangler.toml's flags. workerd
// fires the request's signal and then ends the request at once unless work is still pending, so
// the stream's close, its cost record and its budget settle never ran. Was: the upstream stopped,
// but no record was written and the reservation just expired: the tokens generated were never
// charged to anyone (leaving early was a way round a budget).

const EDGE_KEY = "tg_edge_key_0123456789";
let upstream: EdgeUpstream;
let miniflare: Miniflare;
let bundle: WorkerBundle;
const log = workerLog({ stderr: "drop" });

beforeAll(async () => {
  upstream = await startEdgeUpstream();
  bundle = await bundleWorker();
  const config = {
    // $1,000 per 1M tokens either way: a token is 1,000 nano-dollars.
    providers: { local: { type: "openai-compatible", baseUrl: upstream.url, pricing: { default: { inputPerMillion: 1000, outputPerMillion: 1000 } } } },
    routes: { drip: { targets: [{ provider: "local", model: "drip-model" }], budget: { usd: 1, window: "total" } } },
    keys: [{ id: "edge", team: "edge", hash: sha256(EDGE_KEY) }],
    // A config shared with Node servers names their Redis; the Worker has no such variable and
    // does not use Redis: it serves all the same (on Node the variable not set stops start-up).
    store: { redisUrl: { env: "REDIS_URL" } },
  };
  miniflare = new Miniflare({
    ...bundle.options,
    // The config as a JSON value, as a wrangler.toml [vars] table binds it (the other Workers tests give it as text).
    bindings: { TOLLGATE_CONFIG: config },
    durableObjects: { TOLLGATE_BUDGETS: "TollgateBudgets" },
    handleRuntimeStdio: log.handleRuntimeStdio,
  });
});

afterAll(async () => {
  await miniflare?.dispose();
  upstream?.close();
  bundle?.remove();
});

const recordOf = (requestId: string) => costRecordsInLog(log.text()).find((record) => record.requestId === requestId);

async function routeBudget(): Promise<{ spentUsd: number; reservedUsd: number }> {
  const response = await miniflare.dispatchFetch("http://gateway/v1/budgets", { headers: { authorization: `Bearer ${EDGE_KEY}` } });
  const { scopes } = (await response.json()) as { scopes: { scope: string; spentUsd: number; reservedUsd: number }[] };
  return scopes.find((scope) => scope.scope === "route:drip")!;
}

describe("a client that leaves a stream half-way, on workerd", () => {
  it("stops the upstream, and the tokens generated are recorded (aborted) and charged to the budget", async () => {
    const client = new AbortController();
    const response = await miniflare.dispatchFetch("http://gateway/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "drip", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }),
      signal: client.signal,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-tollgate-request-id")!;
    const reader = response.body!.getReader();
    let text = "";
    while ((text.match(/ word/g) ?? []).length < 5) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${text}`);
      text += new TextDecoder().decode(value);
    }
    client.abort();
    await reader.cancel().catch(() => undefined);

    const drip = upstream.drips.at(-1)!;
    await until(() => drip.closedEarly, "the upstream call to be stopped", 10_000);
    expect(drip.sent).toBeLessThan(DRIP_TOKENS);
    const record = await until(() => recordOf(requestId), () => `a cost record for ${requestId}`, 10_000);
    expect(record.status).toBe("aborted");
    expect(record.usage.outputTokens).toBeGreaterThanOrEqual(5);
    expect(record.usage.outputTokens).toBeLessThan(DRIP_TOKENS);
    // The settle follows the record through the Durable Object: spend is the record's, nothing held.
    let budget = await routeBudget();
    for (const deadline = Date.now() + 5_000; budget.reservedUsd !== 0 && Date.now() < deadline; budget = await routeBudget()) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(budget).toEqual({ ...budget, reservedUsd: 0, spentUsd: record.cost.totalNano / 1e9 });
    expect(record.cost.totalNano).toBeGreaterThan(0);
  }, 30_000);
});
