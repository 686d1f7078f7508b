// The usual Redis of a test file, on top of redis-server.ts's startRedis.
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { startRedis, uniquePrefix, type RedisHandle } from "./redis-server.ts";

export type RedisRig = { url: string; redis: Redis; prefix: string };

/**
 * The usual Redis of a test file: a server (REDIS_URL's, or a private one), a client, and a key
 * prefix of its own, with the prefix's keys deleted and everything stopped after the file.
 * Fields are filled in by beforeAll.
 */
export function useRedis(label: string): RedisRig {
  const rig = { prefix: uniquePrefix(label) } as RedisRig;
  let server: RedisHandle | undefined;
  beforeAll(async () => {
    server = await startRedis();
    rig.url = server.url;
    rig.redis = new Redis(server.url);
  });
  afterAll(async () => {
    if (rig.redis) {
      const keys = await rig.redis.keys(`${rig.prefix}*`);
      if (keys.length > 0) await rig.redis.del(...keys);
      rig.redis.disconnect();
    }
    await server?.stop();
  });
  return rig;
}
