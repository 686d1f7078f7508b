import { LRUCache } from "lru-cache";
import type { KeyValueStore } from "./key-value-store.ts";

/**
 * The embedded store: an LRU cache with expiry, bounded in entries and in characters so that a
 * flood of distinct prompts or large cached answers cannot grow it without limit (the least
 * recently used entries go first).
 *
 * lru-cache rather than a Map: evicting a Map's oldest key through `keys().next()` walks over
 * every key deleted before it, so once the store was full each write cost about 28 µs instead
 * of 1 µs on the 2-core machine (200,000 writes past the limit: 5.6 s).
 */
export class MemoryKeyValueStore implements KeyValueStore {
  private readonly entries: LRUCache<string, string>;

  constructor(
    maxEntries = 100_000,
    now: () => number = Date.now,
    /** About 64 MB of UTF-16 text. */
    maxCharacters = 32 * 1024 * 1024,
  ) {
    this.entries = new LRUCache<string, string>({
      max: maxEntries,
      maxSize: maxCharacters,
      // One value larger than the whole store is not kept (rather than pushing everything else out).
      sizeCalculation: (value, key) => key.length + value.length,
      perf: { now },
      // Expiry is read on every get; the default caches the clock for 1 ms, which tests would see.
      ttlResolution: 0,
    });
  }

  async countSightings(keys: readonly string[], ttlSeconds: number): Promise<number[]> {
    return keys.map((key) => {
      const count = Number(this.entries.get(key) ?? 0) + 1;
      void this.set(key, String(count), ttlSeconds);
      return count;
    });
  }

  async get(key: string): Promise<string | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    // lru-cache reads a ttl of 0 as "never expires"; here it means already gone.
    if (ttlSeconds <= 0) this.entries.delete(key);
    else this.entries.set(key, value, { ttl: ttlSeconds * 1000 });
  }
}
