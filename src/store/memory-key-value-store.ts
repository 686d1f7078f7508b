import type { KeyValueStore } from "./key-value-store.ts";

type Entry = { value: string; expiresAt: number };

/**
 * The embedded store: a Map with expiry, bounded so that a flood of distinct prompts cannot grow
 * it without limit (the oldest entries go first; Maps iterate in insertion order, and every write
 * re-inserts its key at the end).
 */
export class MemoryKeyValueStore implements KeyValueStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  async countSightings(keys: readonly string[], ttlSeconds: number): Promise<number[]> {
    return keys.map((key) => {
      const count = Number(this.read(key) ?? 0) + 1;
      this.write(key, String(count), ttlSeconds);
      return count;
    });
  }

  async get(key: string): Promise<string | undefined> {
    return this.read(key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.write(key, value, ttlSeconds);
  }

  private read(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  private write(key: string, value: string, ttlSeconds: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
