import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisAdmissionStore } from "../src/budgets/redis-admission-store.ts";
import { sha256 } from "./support/gateway.ts";
import { spawnGateway } from "./support/ops-rig.ts";
import { startRedis, uniquePrefix, type RedisHandle } from "./support/redis-server.ts";
import { CLEAR_OF_MIDNIGHT_TIMEOUT_MS, clearOfMidnight } from "./support/clear-of-midnight.ts";

// A gateway process killed (SIGKILL: no shutdown hook runs) while its requests wait on the
// provider. While it lived it renewed their reservations; now they sit in Redis with nobody left
// to settle or renew them, and must free themselves, so the budget is whole again without any
// operator action.

const KEY = "tg_crash_test_key_0123456789";
const today = () => new Date().toISOString().slice(0, 10);

let redisServer: RedisHandle;
let redis: Redis;
let upstream: Server;
const waiting: ServerResponse[] = [];
const prefix = uniquePrefix("crash");
let dir: string;
let gateway: ChildProcess | undefined;

// This file reads today's keys on the real clock: keep its run inside one UTC day.
beforeAll(() => clearOfMidnight(), CLEAR_OF_MIDNIGHT_TIMEOUT_MS);

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  // A provider that never answers: requests stay in flight until the gateway dies.
  upstream = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    waiting.push(response);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  dir = mkdtempSync(join(tmpdir(), "tollgate-crash-"));
});
afterAll(async () => {
  gateway?.kill("SIGKILL");
  for (const response of waiting) response.destroy();
  upstream?.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
  await redisServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a gateway killed with requests in flight", () => {
  it("leaves reservations that expire on their own: the budget is whole again", { timeout: 20_000 }, async () => {
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    const started = await spawnGateway(
      dir,
      "tollgate",
      {
        providers: { gpu: { type: "openai-compatible", baseUrl: upstreamUrl, pricing: { default: { inputPerMillion: 1, outputPerMillion: 4 } } } },
        routes: { chat: { targets: [{ provider: "gpu", model: "m" }], budget: { usd: 1, window: "day" } } },
        keys: [{ id: "app", team: "t", hash: sha256(KEY) }],
        store: { redisUrl: { env: "CRASH_TEST_REDIS" }, keyPrefix: prefix },
        server: { reservationTtlSeconds: 2 },
      },
      { CRASH_TEST_REDIS: redisServer.url },
    );
    gateway = started.child;
    const inFlight = Array.from({ length: 3 }, () =>
      fetch(`${started.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "chat", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] }),
      }).catch((error: unknown) => error),
    );
    const deadline = Date.now() + 10_000;
    while (waiting.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(waiting).toHaveLength(3);

    const store = new RedisAdmissionStore(redis, prefix);
    const scope = `route:chat|${today()}`;
    // Worst case each: (2 bytes + 16 framing) × 1000 + 1000 × 4000 = 4,018,000 nano.
    expect(await store.levels([scope], Date.now())).toEqual([{ spentNano: 0, reservedNano: 3 * 4_018_000 }]);
    // While the gateway lives it renews them: still held after more than twice their TTL.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(await store.levels([scope], Date.now())).toEqual([{ spentNano: 0, reservedNano: 3 * 4_018_000 }]);

    gateway.kill("SIGKILL");
    await Promise.all(inFlight); // the clients see their connections drop
    expect(await store.levels([scope], Date.now())).toEqual([{ spentNano: 0, reservedNano: 3 * 4_018_000 }]);

    await new Promise((resolve) => setTimeout(resolve, 2_200)); // past the 2 s reservation TTL
    expect(await store.levels([scope], Date.now())).toEqual([{ spentNano: 0, reservedNano: 0 }]);
  });
});
