import { resolve } from "node:path";
import { Redis } from "ioredis";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { FileLedgerStore } from "../ledger/file-ledger-store.ts";
import { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { RedisLedgerStore } from "../ledger/redis-ledger-store.ts";

/** Where the embedded store keeps records when the config names no path. */
export const DEFAULT_LEDGER_PATH = ".tollgate/ledger.jsonl";

export type OpenedLedger = { ledger: Ledger; store: LedgerStore; describe: string };

/** Redis when the config's store names a set variable; otherwise the append-only file. */
export async function openLedger(config: ResolvedConfig, log: (line: string) => void): Promise<OpenedLedger> {
  let store: LedgerStore;
  let describe: string;
  if (config.redisUrl) {
    // Commands wait in ioredis's offline queue while Redis is away; the ledger retries what fails.
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableAutoPipelining: false });
    redis.on("error", (error: Error) => log(`[tollgate] redis: ${error.message}`));
    store = new RedisLedgerStore(redis, config.store?.keyPrefix ?? "");
    describe = "Redis";
  } else {
    const path = resolve(config.store?.path ?? DEFAULT_LEDGER_PATH);
    store = await FileLedgerStore.open(path);
    describe = path;
  }
  return { ledger: new Ledger({ store, log }), store, describe };
}
