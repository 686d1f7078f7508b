import type { RedisClient } from "./redis-connection.ts";
import type { KeyValueStore } from "./key-value-store.ts";

/** The shared store on Redis. Keys are `<prefix>tollgate:kv:<key>`; each is its own slot, fine on Cluster. */
export class RedisKeyValueStore implements KeyValueStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = "",
  ) {}

  private key(key: string): string {
    return `${this.prefix}tollgate:kv:${key}`;
  }

  async countSightings(keys: readonly string[], ttlSeconds: number): Promise<number[]> {
    if (keys.length === 0) return [];
    // One pipeline per key: on a Cluster the keys live on different nodes, and a pipeline may only
    // hold one node's keys. Sent in the same turn, the pipelines still leave in one write per node.
    return Promise.all(
      keys.map(async (key) => {
        const [[incrError, count] = [], [expireError] = []] = (await this.redis.pipeline().incr(this.key(key)).expire(this.key(key), ttlSeconds).exec()) ?? [];
        if (incrError || expireError) throw incrError ?? expireError;
        return Number(count);
      }),
    );
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key(key), value, "EX", ttlSeconds);
  }
}
