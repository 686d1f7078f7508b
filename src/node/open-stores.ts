import { dirname, resolve } from "node:path";
import { Redis } from "ioredis";
import { ConfigError, type ResolvedConfig } from "../config/resolve-config.ts";
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
import { connectRedis, isClusterNode, RedisUrlError, type RedisClient } from "../store/redis-connection.ts";
import { keepUnwritten } from "./unwritten-records.ts";

/** Where the embedded store keeps records when the config names no path. */
export const DEFAULT_LEDGER_PATH = ".tollgate/ledger.jsonl";

export type OpenedStores = {
  ledger: Ledger;
  ledgerStore: LedgerStore;
  keyValues: KeyValueStore;
  admissionStore: AdmissionStore;
  describe: string;
  /** Where a gateway stopped during a Redis outage keeps the records it could not write (Redis only). */
  keptRecordsIn?: string;
};

/**
 * Redis when the config's store names a set variable (one connection for the ledger and the
 * policies' state); otherwise the append-only ledger file and in-process memory.
 */
export async function openStores(config: ResolvedConfig, log: (line: string) => void): Promise<OpenedStores> {
  if (config.redisUrl) {
    // While Redis is away a command fails at once (no offline queue), and one it does not answer
    // fails after REDIS_COMMAND_TIMEOUT_MS: a budgeted request gets its 503 in seconds, never a
    // hang, and a refused admission is never sent later from a queue. The ledger and the settles
    // retry what fails. Auto-pipelining sends the commands issued in one event-loop turn
    // (admissions, settlements) in one write: fewer syscalls under load, no added wait when idle.
    const cluster = config.store?.cluster ?? false;
    let redis: RedisClient;
    try {
      redis = connectRedis(config.redisUrl, cluster, { commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS });
    } catch (error) {
      if (error instanceof RedisUrlError) throw new ConfigError([`store.redisUrl: ${error.message}`]);
      throw error;
    }
    redis.on("error", (error: Error & { lastNodeError?: Error }) =>
      // A cluster that cannot load its slot map says why only in the last node's error.
      log(`[tollgate] redis: ${error.message}${error.lastNodeError ? ` (${error.lastNodeError.message})` : ""}`),
    );
    // A cluster reports a node's own connection errors apart (a single server's are "error").
    redis.on("node error", (error: Error, address: string) => log(`[tollgate] redis node ${address}: ${error.message}`));
    // Without an offline queue, commands sent before the connection is up would fail: wait for it
    // (a Redis that is down at start-up is an outage like any other, answered with 503s meanwhile).
    const ready = await readyWithin(redis, REDIS_CONNECT_WAIT_MS, log);
    if (ready && redis instanceof Redis && (await isClusterNode(redis).catch(() => false))) {
      redis.disconnect();
      throw new ConfigError([
        'store.redisUrl: this Redis is a Redis Cluster node, and keys on its other nodes would fail on every request; add "cluster": true to "store"',
      ]);
    }
    const prefix = config.store?.keyPrefix ?? "";
    const ledgerStore = new RedisLedgerStore(redis, prefix);
    // Records a gateway stopped during an outage could not write wait beside the embedded ledger's
    // file; the Node entry writes them (and charges them) at the next start.
    const keptRecordsIn = dirname(resolve(config.store?.path ?? DEFAULT_LEDGER_PATH));
    return {
      keptRecordsIn,
      ledger: new Ledger({ store: ledgerStore, log, keepUnwritten: keepUnwritten(keptRecordsIn) }),
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

/** The longest wait for a Redis reply before the command fails (admission then answers 503). */
const REDIS_COMMAND_TIMEOUT_MS = 2_000;
/** How long start-up waits for Redis before serving anyway. */
const REDIS_CONNECT_WAIT_MS = 5_000;

/** Whether Redis came up within `waitMs`. */
async function readyWithin(redis: RedisClient, waitMs: number, log: (line: string) => void): Promise<boolean> {
  if (redis.status === "ready") return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onReady: (() => void) | undefined;
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => redis.once("ready", (onReady = () => resolve(true)))),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ]);
  clearTimeout(timer);
  redis.off("ready", onReady!);
  if (!ready) log(`[tollgate] warning: Redis is not reachable after ${waitMs} ms; budgeted routes answer 503 until it is`);
  return ready;
}
