import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync, unlinkSync } from "node:fs";
import { link, open, readFile, rename, rm, stat, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { ConfigError } from "../config/resolve-config.ts";

// Without Redis, budgets live in the memory of the process that serves them: two gateways on one
// store.path each enforced a hard budget alone (a review spent 1.84x one with two processes). A
// gateway on the embedded store therefore holds `<store.path>.lock` while it runs, from before it
// reads the ledger until its ledger is closed. Another one started on the path waits for it (a
// restart's new process, started while the old one drains, then reads everything the old one
// wrote, checkpoint included), and fails start-up if it does not stop in time.
//
// The file holds the holder's pid, host and start time. It is created with O_EXCL ("wx"), so of
// two processes starting at once one wins. A lock is taken over when its holder is gone: a dead
// pid on this host (process.kill(pid, 0)), or no heartbeat for STALE_AFTER_MS (a holder on another
// host sharing the volume, or a pid this host has since given to another process). A pid equal to
// this process's own is left to the heartbeat too: in a container every gateway is pid 1, and a
// second container on the same volume must not read the first's lock as its own dead one. So is
// a pid of another pid namespace (Linux's /proc/self/ns/pid): two containers sharing a host name
// (host networking) each see the other's pid as not running.

/** How often the holder touches its lock, so that a lock whose holder is gone shows it. */
const HEARTBEAT_MS = 5_000;
/** A lock not touched for this long is taken over, whoever holds it. */
export const STALE_AFTER_MS = 20_000;
/** How often a waiting gateway looks at the lock again. */
const POLL_MS = 200;

type Holder = { pid: number; host: string; pidNamespace?: string; startedAt: string; token: string };

/** This process's pid namespace ("pid:[4026531836]"), where the system says (Linux); pids of others mean nothing here. */
const PID_NAMESPACE = (() => {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
})();

export type StoreLock = { path: string; release(): Promise<void> };

/** The locks this process holds (lock path to token): released at exit, however it comes. */
const heldHere = new Map<string, string>();
let exitHookInstalled = false;

export const lockPathOf = (storePath: string) => `${storePath}.lock`;

/**
 * Takes the lock of the embedded store at `storePath`, waiting up to `waitMs` for a live holder
 * to let go (said once in the log); then fails start-up naming the path, the holder and the fix.
 */
export async function lockStore(storePath: string, { waitMs, log }: { waitMs: number; log: (line: string) => void }): Promise<StoreLock> {
  const lockPath = lockPathOf(storePath);
  const me: Holder = { pid: process.pid, host: hostname(), ...(PID_NAMESPACE ? { pidNamespace: PID_NAMESPACE } : {}), startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(), token: randomUUID() };
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    if (await tryCreate(lockPath, me)) return held(lockPath, me.token, log);
    const seen = await look(lockPath);
    if (seen === "gone") continue;
    if (isStale(seen)) {
      log(`[tollgate] store.path ${storePath}: taking over the lock of ${who(seen.holder)}, which is no longer running`);
      await takeOver(lockPath, seen.raw);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new ConfigError([
        `store.path: ${storePath} is in use by another gateway (${who(seen.holder)}; lock ${lockPath}), which did not stop within ${Math.round(waitMs / 1000)} s. ` +
          "Without Redis, budgets live in one process's memory, so two gateways on one store.path would each enforce them alone: " +
          `give each gateway its own store.path, or use Redis (store.redisUrl) so that instances share budgets. If no gateway runs there, remove ${lockPath}`,
      ]);
    }
    if (!said) {
      said = true;
      log(`[tollgate] store.path ${storePath} is in use by ${who(seen.holder)}: waiting up to ${Math.round(waitMs / 1000)} s for it to stop (a gateway being restarted drains first); without Redis one gateway at a time serves a store.path`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const who = (holder: Holder | undefined) => (holder ? `pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}` : "a process that has not yet said who it is");

async function tryCreate(lockPath: string, me: Holder): Promise<boolean> {
  let file;
  try {
    file = await open(lockPath, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    await file.writeFile(JSON.stringify(me) + "\n");
  } finally {
    await file.close();
  }
  return true;
}

type Seen = { raw: string; holder?: Holder; touchedMs: number };

/** The lock's content and when its holder last touched it, or "gone" (released meanwhile). */
async function look(lockPath: string): Promise<Seen | "gone"> {
  try {
    const [raw, stats] = await Promise.all([readFile(lockPath, "utf8"), stat(lockPath)]);
    return { raw, holder: parse(raw), touchedMs: stats.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
}

function parse(raw: string): Holder | undefined {
  try {
    const holder = JSON.parse(raw) as Partial<Holder>;
    return typeof holder.pid === "number" && typeof holder.token === "string" ? (holder as Holder) : undefined;
  } catch {
    return undefined; // being written (created, not yet filled): its fresh mtime keeps it
  }
}

function isStale({ holder, touchedMs }: Seen): boolean {
  if (Date.now() - touchedMs > STALE_AFTER_MS) return true;
  // A lock of a version before the namespace was recorded says none: taken as this one's.
  if (!holder || holder.host !== hostname() || (holder.pidNamespace !== undefined && holder.pidNamespace !== PID_NAMESPACE)) return false;
  if (holder.pid === process.pid) return false; // this process's own (heldHere), or another pid namespace's: the heartbeat tells
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"; // EPERM: alive, another user's
  }
}

/**
 * Removes a stale lock, unless another process replaced it meanwhile: of two processes taking
 * over at once, the second must not remove the first's new lock. The lock is moved aside (one
 * rename wins) and removed only if it is the one judged stale; a fresh one is linked back.
 */
async function takeOver(lockPath: string, staleRaw: string): Promise<void> {
  const aside = `${lockPath}.stale-${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    if ((await readFile(aside, "utf8")) !== staleRaw) await link(aside, lockPath).catch(() => undefined);
  } finally {
    await rm(aside, { force: true });
  }
}

function held(lockPath: string, token: string, log: (line: string) => void): StoreLock {
  heldHere.set(lockPath, token);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // A forced exit (the stop's write-out did not finish) or a crash that still runs exit hooks
    // leaves no lock behind for the next start to wait on.
    process.on("exit", () => {
      for (const [path, own] of heldHere) removeIfOwnSync(path, own);
    });
  }
  let lost = false;
  const heartbeat = setInterval(() => {
    void (async () => {
      const seen = await look(lockPath).catch(() => "gone" as const);
      if (seen !== "gone" && seen.holder?.token === token) {
        const now = new Date();
        await utimes(lockPath, now, now).catch(() => undefined);
      } else if (!lost && heldHere.get(lockPath) === token) {
        lost = true;
        log(`[tollgate] error: the lock ${lockPath} was removed or taken over (${seen === "gone" ? "removed" : who(seen.holder)}): another gateway may now serve this store.path's budgets beside this one`);
      }
    })();
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    path: lockPath,
    async release() {
      clearInterval(heartbeat);
      if (heldHere.get(lockPath) !== token) return;
      heldHere.delete(lockPath);
      const seen = await look(lockPath).catch(() => "gone" as const);
      if (seen !== "gone" && seen.holder?.token === token) await rm(lockPath, { force: true });
    },
  };
}

function removeIfOwnSync(lockPath: string, token: string): void {
  try {
    if (parse(readFileSync(lockPath, "utf8"))?.token === token) unlinkSync(lockPath);
  } catch {
    // gone already, or unreadable: nothing of ours to remove
  }
}
