import type { KeyValueStore } from "./key-value-store.ts";

type Entry = { value: string; expiresAt: number };

/**
 * The embedded store: a Map with expiry, bounded in entries and in characters so that a flood of
 * distinct prompts or large cached answers cannot grow it without limit (the oldest entries go
 * first; Maps iterate in insertion order, and every write re-inserts its key at the end).
 */
export class MemoryKeyValueStore implements KeyValueStore {
  private readonly entries = new Map<string, Entry>();
  private characters = 0;

  constructor(
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
    /** About 64 MB of UTF-16 text. */
    private readonly maxCharacters = 32 * 1024 * 1024,
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
      this.remove(key);
      return undefined;
    }
    return entry.value;
  }

  private write(key: string, value: string, ttlSeconds: number): void {
    this.remove(key);
    // One value larger than the whole store would only push everything else out.
    if (key.length + value.length > this.maxCharacters) return;
    this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
    this.characters += key.length + value.length;
    while (this.entries.size > this.maxEntries || this.characters > this.maxCharacters) {
      this.remove(this.entries.keys().next().value as string);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.characters -= key.length + entry.value.length;
    this.entries.delete(key);
  }
}
