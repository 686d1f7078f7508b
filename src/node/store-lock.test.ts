import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../config/resolve-config.ts";
import { lockPathOf, lockStore } from "./store-lock.ts";

// The embedded store's lock on store.path: one gateway at a time, a dead holder's lock taken over.

const directory = mkdtempSync(join(tmpdir(), "tollgate-store-lock-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** This process's pid namespace, as the lock records it (Linux). */
const pidNamespace = readlinkSync("/proc/self/ns/pid");

/** A pid that no process has now: a child that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

const holderOf = (storePath: string) => JSON.parse(readFileSync(lockPathOf(storePath), "utf8")) as { pid: number; host: string; startedAt: string; token: string };

function writeLock(storePath: string, holder: { pid: number; host: string; pidNamespace?: string }, touchedSecondsAgo = 0) {
  writeFileSync(lockPathOf(storePath), JSON.stringify({ ...holder, startedAt: "2026-11-20T08:00:00.000Z", token: "theirs" }) + "\n");
  const touched = new Date(Date.now() - touchedSecondsAgo * 1000);
  utimesSync(lockPathOf(storePath), touched, touched);
}

describe("the store.path lock", () => {
  it("a second lock on a held path waits, says once who holds it, then fails naming the path, the pid and the fix", async () => {
    const path = join(directory, "held.jsonl");
    const first = await lockStore(path, { waitMs: 0, log: () => {} });
    const lines: string[] = [];
    const failure = await lockStore(path, { waitMs: 600, log: (line) => lines.push(line) }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      `store.path: ${path} is in use by another gateway (pid ${process.pid} on ${hostname()}, started ${holderOf(path).startedAt}; lock ${path}.lock), which did not stop within 1 s. ` +
        "Without Redis, budgets live in one process's memory, so two gateways on one store.path would each enforce them alone: " +
        `give each gateway its own store.path, or use Redis (store.redisUrl) so that instances share budgets. If no gateway runs there, remove ${path}.lock`,
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\[tollgate\\] store\\.path .*held\\.jsonl is in use by pid ${process.pid} on .*: waiting up to 1 s for it to stop`));
    expect(holderOf(path).token).not.toBe("theirs");
    await first.release();
    expect(existsSync(lockPathOf(path))).toBe(false);
    const again = await lockStore(path, { waitMs: 0, log: () => {} });
    await again.release();
  });

  it("the lock of a pid that is no longer running on this host is taken over at once", async () => {
    const path = join(directory, "dead.jsonl");
    const pid = deadPid();
    writeLock(path, { pid, host: hostname(), pidNamespace });
    const lines: string[] = [];
    const lock = await lockStore(path, { waitMs: 0, log: (line) => lines.push(line) });
    expect(holderOf(path).pid).toBe(process.pid);
    expect(lines).toEqual([`[tollgate] store.path ${path}: taking over the lock of pid ${pid} on ${hostname()}, started 2026-11-20T08:00:00.000Z, which is no longer running`]);
    await lock.release();
  });

  // A lock written before the pid namespace was recorded (an upgrade after a crash).
  it("the lock of a dead pid that names no pid namespace is taken over at once", async () => {
    const path = join(directory, "dead-unnamed.jsonl");
    writeLock(path, { pid: deadPid(), host: hostname() });
    const lock = await lockStore(path, { waitMs: 0, log: () => {} });
    expect(holderOf(path).pid).toBe(process.pid);
    await lock.release();
  });

  // Two containers on one host name (host networking) and one volume: the other's gateway runs
  // under a pid this one's namespace does not have. Was: taken over at once, both serving.
  it("a lock of another pid namespace on this host is waited on while its holder touches it, though its pid is not running here", async () => {
    const path = join(directory, "other-namespace.jsonl");
    writeLock(path, { pid: deadPid(), host: hostname(), pidNamespace: "pid:[4026500000]" });
    const failure = await lockStore(path, { waitMs: 300, log: () => {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    writeLock(path, { pid: deadPid(), host: hostname(), pidNamespace: "pid:[4026500000]" }, 60);
    const lock = await lockStore(path, { waitMs: 0, log: () => {} });
    expect(holderOf(path)).toMatchObject({ pid: process.pid, pidNamespace });
    await lock.release();
  });

  it("a lock of another host is waited on while its holder touches it, and taken over once it stopped", async () => {
    const path = join(directory, "other-host.jsonl");
    writeLock(path, { pid: 1, host: "another-host" });
    const failure = await lockStore(path, { waitMs: 300, log: () => {} }).catch((error: unknown) => error);
    expect((failure as ConfigError).problems[0]).toContain("(pid 1 on another-host, started 2026-11-20T08:00:00.000Z;");
    writeLock(path, { pid: 1, host: "another-host" }, 60);
    const lock = await lockStore(path, { waitMs: 0, log: () => {} });
    expect(holderOf(path).pid).toBe(process.pid);
    await lock.release();
  });

  it("a release leaves alone a lock that is no longer its own", async () => {
    const path = join(directory, "not-mine.jsonl");
    const lock = await lockStore(path, { waitMs: 0, log: () => {} });
    writeLock(path, { pid: 1, host: "another-host" });
    await lock.release();
    expect(holderOf(path).token).toBe("theirs");
  });
});
