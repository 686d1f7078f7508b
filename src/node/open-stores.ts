import { resolve } from "node:path";
import { Redis } from "ioredis";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { FileLedgerStore } from "../ledger/file-ledger-store.ts";
import { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { RedisLedgerStore } from "../ledger/redis-ledger-store.ts";
import type { KeyValueStore } from "../store/key-value-store.ts";
import { MemoryKeyValueStore } from "../store/memory-key-value-store.ts";
import { RedisKeyValueStore } from "../store/redis-key-value-store.ts";

/** Where the embedded store keeps records when the config names no path. */
export const DEFAULT_LEDGER_PATH = ".tollgate/ledger.jsonl";

export type OpenedStores = { ledger: Ledger; ledgerStore: LedgerStore; keyValues: KeyValueStore; describe: string };

/**
 * Redis when the config's store names a set variable (one connection for the ledger and the
 * policies' state); otherwise the append-only ledger file and in-process memory.
 */
export async function openStores(config: ResolvedConfig, log: (line: string) => void): Promise<OpenedStores> {
  if (config.redisUrl) {
    // Commands wait in ioredis's offline queue while Redis is away; the ledger retries what fails.
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
    redis.on("error", (error: Error) => log(`[tollgate] redis: ${error.message}`));
    const prefix = config.store?.keyPrefix ?? "";
    const ledgerStore = new RedisLedgerStore(redis, prefix);
    return { ledger: new Ledger({ store: ledgerStore, log }), ledgerStore, keyValues: new RedisKeyValueStore(redis, prefix), describe: "Redis" };
  }
  const path = resolve(config.store?.path ?? DEFAULT_LEDGER_PATH);
  const ledgerStore = await FileLedgerStore.open(path);
  return { ledger: new Ledger({ store: ledgerStore, log }), ledgerStore, keyValues: new MemoryKeyValueStore(), describe: path };
}
