import { resolve } from "node:path";
import { Redis } from "ioredis";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { FileLedgerStore } from "../ledger/file-ledger-store.ts";
import { Ledger } from "../ledger/ledger.ts";
import type { LedgerStore } from "../ledger/ledger-store.ts";
import { RedisLedgerStore } from "../ledger/redis-ledger-store.ts";
import type { AdmissionStore } from "../budgets/admission-store.ts";
import { MemoryAdmissionStore } from "../budgets/memory-admission-store.ts";
import { RedisAdmissionStore } from "../budgets/redis-admission-store.ts";
import { hasBudgets } from "../budgets/budget-config.ts";
import { SpendTally } from "../budgets/spend-tally.ts";
import type { KeyValueStore } from "../store/key-value-store.ts";
import { MemoryKeyValueStore } from "../store/memory-key-value-store.ts";
import { RedisKeyValueStore } from "../store/redis-key-value-store.ts";

/** Where the embedded store keeps records when the config names no path. */
export const DEFAULT_LEDGER_PATH = ".tollgate/ledger.jsonl";

export type OpenedStores = { ledger: Ledger; ledgerStore: LedgerStore; keyValues: KeyValueStore; admissionStore: AdmissionStore; describe: string };

/**
 * Redis when the config's store names a set variable (one connection for the ledger and the
 * policies' state); otherwise the append-only ledger file and in-process memory.
 */
export async function openStores(config: ResolvedConfig, log: (line: string) => void): Promise<OpenedStores> {
  if (config.redisUrl) {
    // Commands wait in ioredis's offline queue while Redis is away; the ledger retries what fails.
    // Auto-pipelining sends the commands issued in one event-loop turn (admissions, settlements)
    // in one write: fewer syscalls under load, no added wait when idle.
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
    redis.on("error", (error: Error) => log(`[tollgate] redis: ${error.message}`));
    const prefix = config.store?.keyPrefix ?? "";
    const ledgerStore = new RedisLedgerStore(redis, prefix);
    return {
      ledger: new Ledger({ store: ledgerStore, log }),
      ledgerStore,
      keyValues: new RedisKeyValueStore(redis, prefix),
      admissionStore: new RedisAdmissionStore(redis, prefix),
      describe: "Redis",
    };
  }
  const path = resolve(config.store?.path ?? DEFAULT_LEDGER_PATH);
  // Without Redis, budgets live in memory: the spend on record is rebuilt from the same read
  // that opens the file, so a restart does not reset them.
  const spend = hasBudgets(config) ? new SpendTally(config) : undefined;
  const ledgerStore = await FileLedgerStore.open(path, spend && ((record) => spend.add(record)));
  const admissionStore = new MemoryAdmissionStore();
  for (const [scopeKey, nano] of spend?.totals ?? []) admissionStore.addSpent(scopeKey, nano);
  return { ledger: new Ledger({ store: ledgerStore, log }), ledgerStore, keyValues: new MemoryKeyValueStore(), admissionStore, describe: path };
}
