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
import { connectRedis, evictionPolicies, isClusterNode, RedisUrlError, type RedisClient } from "../store/redis-connection.ts";
import { keepUnwritten, type KeptFiles } from "./unwritten-records.ts";
import { keptFilesTag } from "./kept-files-tag.ts";
import { checkKeptDirectory, checkStorePath } from "./store-path-checks.ts";
import { lockStore, type StoreLock } from "./store-lock.ts";

/** Where the embedded store keeps records when the config names no path. */
export const DEFAULT_LEDGER_PATH = ".tollgate/ledger.jsonl";

export type OpenedStores = {
  ledger: Ledger;
  ledgerStore: LedgerStore;
  keyValues: KeyValueStore;
  admissionStore: AdmissionStore;
  describe: string;
  /** Where a gateway stopped during a Redis outage keeps the records it could not write (Redis only). */
  keptFiles?: KeptFiles;
  /** The embedded store's lock on store.path (not on Redis): released once the ledger is closed. */
  lock?: StoreLock;
};

export type OpenStoresOptions = {
  /** The most cost records held in memory while Redis is down. */
  maxQueuedRecords?: number;
  /** How long the embedded store waits for another gateway on its store.path to stop. */
  lockWaitMs: number;
};

/**
 * Redis when the config's store names a set variable (one connection for the ledger and the
 * policies' state); otherwise the append-only ledger file and in-process memory.
 *
 * On Redis, store.path's directory takes no lock: the budgets are in Redis, shared, and the files
 * kept there during an outage are idempotent by request id, so gateways may share it.
 */
export async function openStores(config: ResolvedConfig, log: (line: string) => void, { maxQueuedRecords, lockWaitMs }: OpenStoresOptions): Promise<OpenedStores> {
  if (config.redisUrl) {
    const storePath = resolve(config.store?.path ?? DEFAULT_LEDGER_PATH);
    await checkKeptDirectory(storePath, config.store?.path !== undefined);
    const redis = await openRedis(config.redisUrl, config.store?.cluster ?? false, log);
    const prefix = config.store?.keyPrefix ?? "";
    const ledgerStore = new RedisLedgerStore(redis, prefix);
    // Records a gateway stopped during an outage could not write wait beside the embedded ledger's
    // file, named for this store; the Node entry writes them (and charges them) at the next start.
    const keptFiles = { directory: dirname(storePath), storeTag: keptFilesTag(config.redisUrl, config.store?.cluster ?? false, prefix) };
    return {
      keptFiles,
      ledger: new Ledger({ store: ledgerStore, log, keepUnwritten: keepUnwritten(keptFiles), ...(maxQueuedRecords ? { maxQueued: maxQueuedRecords } : {}) }),
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
  await checkStorePath(path);
  // Those budgets are this process's alone: one gateway at a time on a path (store-lock.ts), and
  // the file is read only once the one before has closed it.
  const lock = await lockStore(path, { waitMs: lockWaitMs, log });
  let ledgerStore: FileLedgerStore;
  try {
    ledgerStore = await FileLedgerStore.open(path, { ...(spend ? { follower: spend } : {}), log });
  } catch (error) {
    await lock.release();
    throw error;
  }
  const admissionStore = new MemoryAdmissionStore();
  for (const [scopeKey, nano] of spend?.totals ?? []) admissionStore.addSpent(scopeKey, nano);
  return { ledger: new Ledger({ store: ledgerStore, log, ...(maxQueuedRecords ? { maxQueued: maxQueuedRecords } : {}) }), ledgerStore, keyValues: new MemoryKeyValueStore(), admissionStore, describe: path, lock };
}

/**
 * The store's connection, once it is up or REDIS_CONNECT_WAIT_MS have passed (a Redis that is
 * down at start-up is an outage like any other, answered with 503s meanwhile).
 *
 * While Redis is away a command fails at once (no offline queue; on a Cluster after ioredis's
 * redirection retries, about a second and a half), and one it does not answer fails after
 * REDIS_COMMAND_TIMEOUT_MS: a budgeted request gets its 503 in seconds, never a hang, and a
 * refused admission is never sent later from a queue. The ledger and the settles retry what fails.
 *
 * A store named the wrong kind stops start-up with the fix: a Cluster node named as one server
 * would fail every key on its other nodes (MOVED), and a single server named as a Cluster has no
 * slot map to give.
 */
async function openRedis(url: string, cluster: boolean, log: (line: string) => void): Promise<RedisClient> {
  let redis: RedisClient;
  try {
    redis = connectRedis(url, cluster, { commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof RedisUrlError) throw new ConfigError([`store.redisUrl: ${error.message}`]);
    throw error;
  }
  redis.on("error", (error: Error & { lastNodeError?: Error }) =>
    // A cluster that cannot load its slot map says why only in the last node's error.
    log(`[tollgate] redis: ${error.message}${error.lastNodeError ? ` (${error.lastNodeError.message})` : ""}`),
  );
  // A cluster reports a node's own connection errors apart. A node that is down fails every
  // connection to it, and a cluster opens one for each command sent its way: one line per node
  // and message per 10 s.
  const nodeLog = onceEvery(10_000, log);
  redis.on("node error", (error: Error, address: string) => nodeLog(`[tollgate] redis node ${address}: ${error.message}`));

  const outcome = await readyWithin(redis, REDIS_CONNECT_WAIT_MS);
  if (outcome === "not a cluster") {
    redis.disconnect();
    throw new ConfigError(['store.redisUrl: this Redis is not a Redis Cluster (its cluster support is disabled); remove "cluster": true from "store"']);
  }
  if (outcome === "waited") log(`[tollgate] warning: Redis is not reachable after ${REDIS_CONNECT_WAIT_MS} ms; budgeted routes answer 503 until it is`);
  if (outcome === "ready" && redis instanceof Redis && (await isClusterNode(redis).catch(() => false))) {
    redis.disconnect();
    throw new ConfigError([
      'store.redisUrl: this Redis is a Redis Cluster node, and keys on its other nodes would fail on every request; add "cluster": true to "store"',
    ]);
  }
  if (outcome === "ready") await warnIfEvicting(redis, log);
  // A Redis that comes up after the gateway (a common start order of pods) is checked once reached.
  else if (outcome === "waited") redis.once("ready", () => void warnIfEvicting(redis, log));
  return redis;
}

/**
 * A Redis that evicts keys under memory pressure drops what tollgate keeps nowhere else: an
 * evicted budget level resets that budget's spend to $0 (a hard budget then serves past its
 * limit), an evicted record is gone from reports. The ledger grows without end, so the pressure
 * comes. Said at start-up, not refused: a Redis may be shared, and its policy is the operator's.
 */
async function warnIfEvicting(redis: RedisClient, log: (line: string) => void): Promise<void> {
  const policies = await evictionPolicies(redis).catch(() => []);
  if (policies.length === 0) return;
  log(
    `[tollgate] warning: Redis may evict keys (maxmemory-policy ${policies.join(", ")}): an evicted budget level resets that budget's spend to $0, ` +
      "and an evicted cost record is lost to reports; set maxmemory-policy noeviction (docs/budgets.md, Stores)",
  );
}

/** `log`, but a line already written within `everyMs` is not written again. */
function onceEvery(everyMs: number, log: (line: string) => void): (line: string) => void {
  const lastWritten = new Map<string, number>();
  return (line) => {
    const now = Date.now();
    if (now - (lastWritten.get(line) ?? -Infinity) < everyMs) return;
    if (lastWritten.size >= 1_000) lastWritten.clear(); // bounded: addresses and messages are few
    lastWritten.set(line, now);
    log(line);
  };
}

/** The longest wait for a Redis reply before the command fails (admission then answers 503). */
const REDIS_COMMAND_TIMEOUT_MS = 2_000;
/** How long start-up waits for Redis before serving anyway. */
const REDIS_CONNECT_WAIT_MS = 5_000;

/**
 * How the wait for the connection ended: "ready", "waited" (`waitMs` passed), or "not a cluster"
 * (a Cluster client's seeds answered that they are not cluster nodes).
 */
async function readyWithin(redis: RedisClient, waitMs: number): Promise<"ready" | "waited" | "not a cluster"> {
  if (redis.status === "ready") return "ready";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onReady: (() => void) | undefined;
  let onError: ((error: Error & { lastNodeError?: Error }) => void) | undefined;
  const outcome = await Promise.race([
    new Promise<"ready">((resolve) => redis.once("ready", (onReady = () => resolve("ready")))),
    new Promise<"waited">((resolve) => (timer = setTimeout(() => resolve("waited"), waitMs))),
    new Promise<"not a cluster">((resolve) =>
      redis.on(
        "error",
        (onError = (error) => {
          if (/cluster support disabled/i.test(`${error.message} ${error.lastNodeError?.message ?? ""}`)) resolve("not a cluster");
        }),
      ),
    ),
  ]);
  clearTimeout(timer);
  redis.off("ready", onReady!);
  redis.off("error", onError!);
  return outcome;
}
