// gateway.close() during a Redis outage ends the Redis client: no reconnect attempts (and their
// log lines, and the timers that hold the process open) after it.
// Used to be wrong: with no offline queue, ioredis refuses QUIT on a connection it cannot write,
// and RedisLedgerStore.close() swallowed that: the client went on reconnecting for ever.

import { afterAll, expect, it } from "vitest";
import { startRedis, type RedisHandle } from "./support/redis-server.ts";
import { startGateway } from "../src/node/serve.ts";
import { testConfig } from "./support/gateway.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let redisServer: RedisHandle | undefined;
afterAll(async () => {
  await redisServer?.stop();
});

it("after close() during an outage, the gateway's Redis client is ended, not reconnecting", async () => {
  redisServer = await startRedis({ privateServer: true });
  const dir = mkdtempSync(join(tmpdir(), "review-diff-close-"));
  const logs: string[] = [];
  const gateway = await startGateway({
    config: { ...testConfig(), store: { redisUrl: { env: "REDIS_URL" }, path: join(dir, "ledger.jsonl") } },
    port: 0,
    env: { OPENAI_API_KEY: "sk", ANTHROPIC_API_KEY: "sk", REDIS_URL: redisServer.url },
    log: (line) => logs.push(line),
  });
  const redis = (gateway.admissionStore as unknown as { redis: { status: string; disconnect(): void } }).redis;
  expect(redis.status).toBe("ready");
  await redisServer.stop();
  redisServer = undefined;
  // Let ioredis notice the outage.
  for (let i = 0; i < 50 && redis.status === "ready"; i++) await new Promise((r) => setTimeout(r, 20));
  await gateway.close({ drainMs: 100 });
  const linesAtClose = logs.length;
  await new Promise((r) => setTimeout(r, 1500));
  const loggedAfterClose = logs.slice(linesAtClose).filter((line) => line.includes("redis:"));
  redis.disconnect(); // clean up, should close() have left it running
  expect(loggedAfterClose).toEqual([]);
}, 30_000);
