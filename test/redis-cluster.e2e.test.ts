// Two gateways on a real three-master Redis Cluster (`"store": {"cluster": true}`), as a platform
// runs tollgate at scale: budgets and rate limits hold across both, every record and aggregate
// lands, the cost report reads days kept on different nodes, and the prompt-cache policy's
// sightings (keys spread over every node) count. The clouds are the msw stand-ins.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { RedisLedgerStore } from "../src/ledger/redis-ledger-store.ts";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { connectRedis } from "../src/store/redis-connection.ts";
import type { Cluster } from "ioredis";
import { ADMIN_KEY, APP_KEY, OPENAI_KEY, ANTHROPIC_KEY, postJson, startGatewaysOnRedis, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startRedisCluster, type RedisClusterHandle } from "./support/redis-cluster.ts";
import { startRedis, uniquePrefix } from "./support/redis-server.ts";
import { makeCostRecord } from "./support/cost-records.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";

// "Hello there" on gpt-4o: 2 prompt + 4 completion tokens = 2 × 2,500 + 4 × 10,000 = 45,000
// nano-dollars; its worst case with max_tokens 20 is 267,500, so a $0.001 budget admits at most
// 3 at once and serves 22 in all (22 × 45,000 = 990,000).
const BUDGET_NANO = 1_000_000;
const PER_REQUEST_NANO = 45_000;
const today = () => new Date().toISOString().slice(0, 10);

function clusterConfig() {
  const base = testConfig();
  return {
    ...base,
    routes: {
      ...base.routes,
      budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: BUDGET_NANO / 1e9, window: "day" } },
      throttled: { targets: [{ provider: "openai", model: "gpt-4o" }], rateLimit: { rpm: 5 } },
      cached: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }], policies: { promptCache: { mode: "auto" } } },
    },
  };
}

let cluster: RedisClusterHandle;
let mocks: MockProviders;
let gateways: RunningGateway[] = [];
let redis: Cluster;
const prefix = uniquePrefix("cluster-e2e");

// Budgets and records are read under today's keys on the real clock.
beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);

beforeAll(async () => {
  mocks = startMockProviders();
  cluster = await startRedisCluster();
  gateways = await startGatewaysOnRedis(2, clusterConfig(), { url: cluster.url, prefix, cluster: true });
  redis = connectRedis(cluster.url, true, { commandTimeoutMs: 2_000 }) as Cluster;
}, 30_000);

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  redis?.disconnect();
  await cluster?.stop();
  mocks?.close();
});

function ask(gateway: RunningGateway, route: string) {
  return postJson(gateway, "/v1/chat/completions", { model: route, max_tokens: 20, messages: [{ role: "user", content: "Hello there" }] });
}

async function recordsOf(route: string, expected: number) {
  await Promise.all(gateways.map((gateway) => gateway.ledger.flush()));
  const ledger = new RedisLedgerStore(redis, prefix);
  for (let attempt = 0; ; attempt++) {
    const records = (await ledger.records(today())).filter((record) => record.route === route);
    if (records.length >= expected || attempt === 100) return records;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("two gateways on a Redis Cluster", () => {
  it("60 concurrent requests across both never overspend the budget, and settle to exactly the records' total", async () => {
    const responses = await Promise.all(Array.from({ length: 60 }, (_, index) => ask(gateways[index % 2]!, "budgeted")));
    const served = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status !== 200);
    await Promise.all(responses.map((response) => response.text()));
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(refused.map((response) => response.status))).toEqual(new Set([402]));

    const records = await recordsOf("budgeted", served.length);
    expect(records.map((record) => record.requestId).sort()).toEqual(served.map((response) => response.headers.get("x-tollgate-request-id")).sort());
    expect(records.every((record) => record.cost.totalNano === PER_REQUEST_NANO)).toBe(true);

    const scope = `route:budgeted|${today()}`;
    const deadline = Date.now() + 10_000;
    let level = (await gateways[1]!.admissionStore.levels([scope], Date.now()))[0]!;
    while (level.reservedNano !== 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      level = (await gateways[1]!.admissionStore.levels([scope], Date.now()))[0]!;
    }
    expect(level).toEqual({ spentNano: served.length * PER_REQUEST_NANO, reservedNano: 0 });
    expect(level.spentNano).toBeLessThanOrEqual(BUDGET_NANO);

    // Either gateway shows the same state: it lives in the cluster, not in a process.
    const budgets = (await (await fetch(`${gateways[0]!.url}/v1/budgets`, { headers: { authorization: `Bearer ${APP_KEY}` } })).json()) as {
      scopes: { scope: string; spentUsd: number; reservedUsd: number }[];
    };
    expect(budgets.scopes.find((entry) => entry.scope === "route:budgeted")).toMatchObject({ spentUsd: (served.length * PER_REQUEST_NANO) / 1e9, reservedUsd: 0 });
  });

  it("a rate limit of 5 a minute holds across both gateways", async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, (_, index) => ask(gateways[index % 2]!, "throttled")));
    await Promise.all(responses.map((response) => response.text()));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
  });

  it("both SDKs, streamed and not, leave exact records in the cluster", async () => {
    mocks.openai.enqueue({ kind: "text", chunks: ["Hi", " there"], usage: { prompt_tokens: 1000, completion_tokens: 200 } });
    mocks.anthropic.enqueue({ kind: "text", text: "Hello.", usage: { input_tokens: 3000, output_tokens: 100 } });
    const openai = new OpenAI({ baseURL: `${gateways[0]!.url}/v1`, apiKey: APP_KEY, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: gateways[1]!.url, apiKey: APP_KEY, maxRetries: 0 });

    const stream = await openai.chat.completions.create({ model: "gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Hi there");
    const message = await anthropic.messages.create({ model: "claude", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    expect(message.content).toEqual([{ type: "text", text: "Hello." }]);

    // gpt-4o: 1000 × 2,500 + 200 × 10,000 = 4,500,000; claude-sonnet-4-6: 3000 × 3,000 + 100 × 15,000 = 10,500,000.
    expect((await recordsOf("gpt", 1)).map((record) => record.cost.totalNano)).toEqual([4_500_000]);
    expect((await recordsOf("claude", 1)).map((record) => record.cost.totalNano)).toEqual([10_500_000]);
  });

  it("the cost report sums days that live on different nodes", async () => {
    const ledger = new RedisLedgerStore(redis, prefix);
    const days = ["2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04"];
    expect(new Set(await Promise.all(days.map((day) => cluster.nodeFor(ledger.keysFor(day).totals)))).size).toBeGreaterThan(1);
    await ledger.write(
      days.map((day, index) =>
        makeCostRecord({
          time: `${day}T12:00:00.000Z`,
          route: "history",
          cost: { inputNano: 0, cacheReadNano: 0, cacheWriteNano: 0, outputNano: 0, totalNano: 1_000_000_001 * (index + 1), cacheSavingsNano: 0 },
        }),
      ),
    );
    const response = await fetch(`${gateways[1]!.url}/v1/admin/costs?from=2026-10-01&to=2026-10-31&groupBy=day,route`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.status).toBe(200);
    const report = (await response.json()) as { rows: { day: string; route: string; costNano: string }[]; totals: { costNano: string; costUsd: string } };
    expect(report.rows.map((row) => [row.day, row.route, row.costNano])).toEqual([
      ["2026-10-01", "history", "1000000001"],
      ["2026-10-02", "history", "2000000002"],
      ["2026-10-03", "history", "3000000003"],
      ["2026-10-04", "history", "4000000004"],
    ]);
    expect(report.totals).toMatchObject({ costNano: "10000000010", costUsd: "10.00000001" });
  });

  it("the prompt-cache policy counts a team's sightings in the cluster, so the second gateway sees the first's", async () => {
    const conversation = [
      { role: "system", content: "You are a helpful assistant. ".repeat(10) },
      { role: "user", content: "Summarize this support ticket. " + "The details of the ticket follow in full. ".repeat(300) },
    ];
    const send = async (gateway: RunningGateway) => {
      const response = await postJson(gateway, "/v1/chat/completions", { model: "cached", max_tokens: 16, messages: conversation });
      expect(response.status).toBe(200);
      await response.text();
      return response.headers.get("x-tollgate-policies") ?? "";
    };
    expect(await send(gateways[0]!)).toContain("first-sighting");
    expect(await send(gateways[1]!)).toMatch(/conversation:5m/);
  });
});

describe("start-up against a Redis Cluster", () => {
  const env = { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY };

  it('refuses a cluster node named without "cluster": true, saying what to add', async () => {
    const start = startGateway({
      config: { ...testConfig(), store: { redisUrl: { env: "REDIS_URL" } } },
      port: 0,
      env: { ...env, REDIS_URL: cluster.nodeUrls[0]! },
      log: () => {},
    });
    await expect(start).rejects.toThrow(/store\.redisUrl: this Redis is a Redis Cluster node.*add "cluster": true to "store"/);
  });

  it('refuses a single Redis named with "cluster": true, saying what to remove, without waiting out the connect', async () => {
    const single = await startRedis({ privateServer: true });
    try {
      const started = Date.now();
      const start = startGateway({
        config: { ...testConfig(), store: { redisUrl: { env: "REDIS_URL" }, cluster: true, path: temporaryLedgerPath() } },
        port: 0,
        env: { ...env, REDIS_URL: single.url },
        log: () => {},
      });
      await expect(start).rejects.toThrow(/store\.redisUrl: this Redis is not a Redis Cluster \(its cluster support is disabled\); remove "cluster": true from "store"/);
      // Refused on the server's answer, not after the 5 s wait for a Redis that is down.
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await single.stop();
    }
  });

  it("serves when one seed's host name no longer resolves, from the seeds that do", async () => {
    const gateway = await startGateway({
      config: { ...clusterConfig(), store: { redisUrl: { env: "REDIS_URL" }, cluster: true, keyPrefix: uniquePrefix("cluster-dns"), path: temporaryLedgerPath() } },
      port: 0,
      env: { ...env, REDIS_URL: `redis://retired-node.invalid:6379,${cluster.url}` },
      upstreamTransport: "fetch",
      log: () => {},
    });
    try {
      const response = await ask(gateway, "budgeted");
      expect(response.status).toBe(200);
      await response.text();
    } finally {
      await gateway.close();
    }
  });

  it("refuses seed nodes that are not redis:// URLs, naming the field and never the password", async () => {
    const start = startGateway({
      config: { ...testConfig(), store: { redisUrl: { env: "REDIS_URL" }, cluster: true } },
      port: 0,
      env: { ...env, REDIS_URL: `${cluster.nodeUrls[0]!},http://ops:hunter2@10.0.0.9:6379` },
      log: () => {},
    });
    await expect(start).rejects.toThrow(/store\.redisUrl: "http:\/\/\*\*\*@10\.0\.0\.9:6379" is not a redis:\/\/ or rediss:\/\/ URL/);
    await expect(start).rejects.not.toThrow(/hunter2/);
  });

  // Last in the file: it takes a node away from the cluster the other tests share.
  it("a node that goes away: budgets kept on it fail closed with a 503, other routes still answer, and the log names the node", async () => {
    const lines: string[] = [];
    const gateway = await startGateway({
      config: { ...clusterConfig(), store: { redisUrl: { env: "REDIS_URL" }, cluster: true, keyPrefix: prefix, path: temporaryLedgerPath() } },
      port: 0,
      env: { ...env, REDIS_URL: cluster.url },
      upstreamTransport: "fetch",
      log: (line) => lines.push(line),
    });
    try {
      const budgetNode = await cluster.nodeFor(`${prefix}{tollgate:budgets}:expiries`);
      await cluster.stopNode(cluster.nodeUrls.indexOf(budgetNode));
      const refused = await ask(gateway, "budgeted");
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("budget_store_unavailable");
      const answered = await ask(gateway, "gpt");
      expect(answered.status).toBe(200);
      await answered.text();
      expect(lines).toContain(`[tollgate] redis node ${new URL(budgetNode).host}: connect ECONNREFUSED ${new URL(budgetNode).host}`);
      // Each connection to the node fails alike: each line is written once per 10 s, not per try.
      const nodeLines = lines.filter((line) => line.startsWith("[tollgate] redis node"));
      expect(nodeLines).toEqual([...new Set(nodeLines)]);
    } finally {
      await gateway.close({ drainMs: 0 });
    }
  }, 30_000);
});
