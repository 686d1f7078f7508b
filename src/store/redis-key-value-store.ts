import type { Redis } from "ioredis";
import type { KeyValueStore } from "./key-value-store.ts";

/** The shared store on Redis. Keys are `<prefix>tollgate:kv:<key>`; each is its own slot, fine on Cluster. */
export class RedisKeyValueStore implements KeyValueStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = "",
  ) {}

  private key(key: string): string {
    return `${this.prefix}tollgate:kv:${key}`;
  }

  async countSightings(keys: readonly string[], ttlSeconds: number): Promise<number[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.incr(this.key(key)).expire(this.key(key), ttlSeconds);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
    return keys.map((_, index) => Number(results[index * 2]![1]));
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key(key), value, "EX", ttlSeconds);
  }
}
