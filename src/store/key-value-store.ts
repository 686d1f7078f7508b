// Short-lived shared state the policies need: how often a prompt prefix was seen lately (prompt
// caching) and whole answers kept for a while (response cache). Redis when configured, so every
// gateway instance sees the same counts; otherwise this process's memory, which is enough for
// state that only saves money and may be lost on a restart.

export interface KeyValueStore {
  /**
   * Counts one more sighting of each key and returns the counts, in one round trip. Each key
   * lives `ttlSeconds` after its latest sighting: "seen within the TTL" slides like a cache does.
   */
  countSightings(keys: readonly string[], ttlSeconds: number): Promise<number[]>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
}
