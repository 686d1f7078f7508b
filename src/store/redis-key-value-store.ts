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
    // Plain commands, not one pipeline: on a Cluster the keys live on different nodes, and a
    // pipeline may only hold one node's keys. On a single server, issued in the same turn, they
    // are auto-pipelined into one write.
    return Promise.all(
      keys.map(async (key) => {
        const [count] = await Promise.all([this.redis.incr(this.key(key)), this.redis.expire(this.key(key), ttlSeconds)]);
        return count;
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
