import { createConnection, createServer, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { AdmitPlan } from "../../src/budgets/admission-store.ts";
import { RedisAdmissionStore } from "../../src/budgets/redis-admission-store.ts";
import { useRedis } from "../../test/support/use-redis.ts";

// The admission script must be idempotent by request id. Run twice for one request, it added the
// amount to `reserved` twice but recorded the reservation (one amount) once, so settling (or
// expiry) freed only one amount: the other stayed held in the scope for good (a `total` window
// never expires), refusing requests for spend that never happened.
// It does run twice in production: ioredis resends a command whose reply was lost when the
// connection dropped (autoResendUnfulfilledCommands, on by default; open-stores.ts keeps it).

const rig = useRedis("review-admit-resent");
const now = Date.parse("2026-11-22T12:00:00Z");
const scope = { key: "route:chat|total", scope: "route:chat", limitNano: 10_000_000, mode: "hard" as const, windowEndsAt: 0 };
const plan = (requestId: string): AdmitPlan => ({ requestId, now, reservationExpiresAt: now + 120_000, amountNano: 1_000_000, scopes: [scope], rates: [] });

/** A TCP proxy to Redis that, once armed, swallows the next reply and drops the connection. */
function flakyProxy(target: URL): Promise<{ server: Server; url: string; armOn(marker: string): void }> {
  let marker: string | undefined;
  let dropNextReply = false;
  const server = createServer((client: Socket) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    client.on("data", (chunk) => {
      if (marker && chunk.includes(marker)) {
        marker = undefined;
        dropNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (dropNextReply) {
        dropNextReply = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number };
      resolve({ server, url: `redis://127.0.0.1:${address.port}`, armOn: (text) => void (marker = text) });
    }),
  );
}

let proxyServer: Server | undefined;
let viaProxy: Redis | undefined;
afterAll(() => {
  viaProxy?.disconnect();
  proxyServer?.close();
});

describe("Redis admission run twice for one request", () => {
  it("a repeated admit of the same request reserves once", async () => {
    const store = new RedisAdmissionStore(rig.redis, `${rig.prefix}direct`);
    await store.admit(plan("req_twice"));
    await store.admit(plan("req_twice"));
    await store.settle({ requestId: "req_twice", now, scopeKeys: [scope.key], actualNano: 400_000, tokens: 0, rateScopes: [] });
    expect(await store.levels([scope.key], now)).toEqual([{ spentNano: 400_000, reservedNano: 0 }]);
  });

  it("an admission whose reply was lost to a dropped connection leaves nothing held once settled", async () => {
    const proxy = await flakyProxy(new URL(rig.url));
    proxyServer = proxy.server;
    // The gateway's own client options (src/node/open-stores.ts).
    viaProxy = new Redis(proxy.url, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
    viaProxy.on("error", () => undefined);
    const prefix = `${rig.prefix}proxy`;
    const store = new RedisAdmissionStore(viaProxy, prefix);
    const direct = new RedisAdmissionStore(rig.redis, prefix);
    await store.admit(plan("req_warm")); // loads the script, so the next call is one EVALSHA
    await store.settle({ requestId: "req_warm", now, scopeKeys: [scope.key], actualNano: 0, tokens: 0, rateScopes: [] });

    proxy.armOn("req_lost_reply");
    expect(await store.admit(plan("req_lost_reply"))).toMatchObject({ admitted: true });
    await store.settle({ requestId: "req_lost_reply", now, scopeKeys: [scope.key], actualNano: 400_000, tokens: 0, rateScopes: [] });
    // Long after: every reservation has expired or been settled.
    expect(await direct.levels([scope.key], now + 600_000)).toEqual([{ spentNano: 400_000, reservedNano: 0 }]);
  });
});
