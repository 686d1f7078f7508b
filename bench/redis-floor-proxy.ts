// The floor of a metering proxy on this stack: bare-hono-proxy.ts (the same forward()) plus the Redis work a gateway
// that enforces budgets and keeps an exact ledger cannot skip: one script call before the
// upstream call (reserve a request's worst case on three scopes, atomically, with an expiry) and,
// after the answer, one batched script call that writes a cost record of tollgate's size with
// its aggregates and releases the reservation. No parsing, no auth, no policies, no pricing.
// Usage: tsx bench/redis-floor-proxy.ts <port> <upstream origin>   (Redis: TOLLGATE_BENCH_REDIS_URL)
import type { Server } from "node:http";
import { randomUUID } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { forward, toWebStream } from "./lib/forward.ts";
import { announce, BENCH_REDIS_VARIABLE, CHAT_PATH, portFromArgs } from "./lib/shared.ts";

const redis = new Redis(process.env[BENCH_REDIS_VARIABLE]!, { enableAutoPipelining: true });

// KEYS: three scope hashes, reservations, expiries. ARGV: request id, amount, expires at.
redis.defineCommand("floorReserve", {
  numberOfKeys: 5,
  lua: `for i = 1, 3 do redis.call('HINCRBY', KEYS[i], 'reserved', ARGV[2]) end
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
return 1`,
});
// KEYS: three scope hashes, reservations, expiries, list, totals, then one record key per record.
// ARGV: per record: id, JSON, amount, actual.
redis.defineCommand("floorRecord", {
  lua: `for r = 8, #KEYS do
  local a = (r - 8) * 4 + 1
  if redis.call('SET', KEYS[r], ARGV[a + 1], 'NX') then
    redis.call('RPUSH', KEYS[6], ARGV[a])
    for _, metric in ipairs({'requests', 'input_tokens', 'output_tokens', 'cost_nano'}) do redis.call('HINCRBY', KEYS[7], metric, 1) end
  end
  for i = 1, 3 do
    redis.call('HINCRBY', KEYS[i], 'reserved', -tonumber(ARGV[a + 2]))
    redis.call('HINCRBY', KEYS[i], 'spent', ARGV[a + 3])
  end
  redis.call('HDEL', KEYS[4], ARGV[a])
  redis.call('ZREM', KEYS[5], ARGV[a])
end
return 1`,
});
type FloorCommands = {
  floorReserve(...args: (string | number)[]): Promise<number>;
  floorRecord(...args: (string | number)[]): Promise<number>;
};
const scripts = redis as unknown as FloorCommands;
const scopes = ["{floor}:scope:route", "{floor}:scope:key", "{floor}:scope:team"];
const fixed = [...scopes, "{floor}:reservations", "{floor}:expiries"];
// A record the size of tollgate's (about 1 KB of JSON).
const recordTemplate = { route: "bench", keyId: "bench", team: "bench", provider: "fake", model: "bench-model", usage: { input: 9, output: 16 }, padding: "x".repeat(900) };

let pending: { id: string; json: string }[] = [];
function record(id: string): void {
  if (pending.push({ id, json: JSON.stringify({ ...recordTemplate, requestId: id, time: new Date().toISOString() }) }) > 1) return;
  setImmediate(() => {
    const batch = pending;
    pending = [];
    const keys = [...fixed, "{floor}:records", "{floor}:totals", ...batch.map(({ id }) => `{floor}:record:${id}`)];
    const args = batch.flatMap(({ id, json }) => [id, json, 1000, 500]);
    void scripts.floorRecord(keys.length, ...keys, ...args);
  });
}

const app = new Hono();
app.post(CHAT_PATH, async (c) => {
  const id = randomUUID();
  await scripts.floorReserve(...fixed, id, 1000, Date.now() + 660_000);
  const { status, contentType, body } = await forward(c);
  if (contentType.startsWith("text/event-stream")) {
    return c.body(toWebStream(body, () => record(id)), status, { "content-type": contentType, "cache-control": "no-cache" });
  }
  const bytes = new Uint8Array(await body.arrayBuffer());
  record(id);
  return c.body(bytes, status, { "content-type": contentType });
});

const server = serve({ fetch: app.fetch, port: portFromArgs(), hostname: "127.0.0.1" }, (info) => {
  announce({ type: "ready", port: info.port });
});
(server as Server).keepAliveTimeout = 60_000;
