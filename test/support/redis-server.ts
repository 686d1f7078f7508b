// A real Redis for tests. With REDIS_URL set, that server is used as is (and shared: give every
// test its own key prefix with uniquePrefix()). Otherwise a private, memory-only redis-server is
// spawned on a free local port and shut down by stop(). No vitest here: the benchmark uses it too
// (useRedis in use-redis.ts is the test files' helper).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { gracefulStop, killOnProcessExit } from "./child-process.ts";

export interface RedisHandle {
  url: string;
  /** The spawned server's process id (absent when REDIS_URL's server is used). */
  pid?: number;
  stop(): Promise<void>;
}

/** A private server that can crash and come back on the same port: a Redis outage. */
export interface RestartableRedis {
  url: string;
  /** SIGKILL, as a crash: nothing is saved on the way out. Resolves once the process is gone. */
  crash(): Promise<void>;
  /** Starts it again on the same port (with its data, where it persists). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const PORT_ATTEMPTS = 5;
const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

/** @param privateServer always spawn one, even with REDIS_URL set (the benchmark fills it with records). */
export async function startRedis({ privateServer = false } = {}): Promise<RedisHandle> {
  const shared = process.env.REDIS_URL;
  if (shared && !privateServer) return { url: shared, stop: async () => {} };

  // The free port can be taken between probing and binding; then redis-server exits and we retry.
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await findFreePort();
    try {
      return await startRedisOn(port);
    } catch (error) {
      if (!(error instanceof PortTakenError)) throw error;
      lastError = error;
    }
  }
  throw new Error(`could not start redis-server after ${PORT_ATTEMPTS} ports`, { cause: lastError });
}

/**
 * A private redis-server for outage tests. `persist`: its data survives a crash (AOF written on
 * every command, as a failed-over replica would have it); otherwise it comes back empty.
 */
export async function startRestartableRedis({ persist = false } = {}): Promise<RestartableRedis> {
  const dir = persist ? mkdtempSync(join(tmpdir(), "tollgate-redis-")) : tmpdir();
  let handle = await startRedisOn(await findFreePort(), { dir, persist });
  const port = Number(new URL(handle.url).port);
  return {
    url: handle.url,
    crash: () => handle.crash(),
    async restart() {
      handle = await startRedisOn(port, { dir, persist });
    },
    stop: () => handle.stop(),
  };
}

// A random key prefix like "tollgate-test:3f9a0c1d2b4e:", so tests never see each other's keys.
export function uniquePrefix(label = "tollgate-test"): string {
  return `${label}:${randomBytes(6).toString("hex")}:`;
}

export class PortTakenError extends Error {}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error("no port from the OS"))));
    });
  });
}

/** `extraArgs`: more redis-server options, e.g. a cluster node's (redis-cluster.ts). */
export async function startRedisOn(
  port: number,
  { dir = tmpdir(), persist = false, extraArgs = [] as string[] } = {},
): Promise<RedisHandle & { crash(): Promise<void> }> {
  const child = spawn(
    "redis-server",
    // Memory only unless persisting: no RDB snapshots, and any stray file goes to a temp dir, not the repo.
    [
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", ""],
      ...(persist ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
      ...["--dir", dir, ...extraArgs],
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  const keep = (chunk: Buffer) => (log = (log + chunk.toString("utf8")).slice(-10_000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);

  let spawnError: NodeJS.ErrnoException | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", (error) => {
      spawnError = error;
      resolve();
    });
  });
  killOnProcessExit(child);

  // redis-server treats SIGTERM as SHUTDOWN; with --save "" it writes nothing.
  const stop = gracefulStop(child, exited, STOP_GRACE_MS);

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (spawnError?.code === "ENOENT") {
      throw new Error("redis-server is not installed; install it: apt-get install -y redis-server (or set REDIS_URL)");
    }
    if (spawnError) throw new Error(`cannot run redis-server: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      if (/address already in use/i.test(log)) throw new PortTakenError(`port ${port} is taken`);
      throw new Error(`redis-server exited (${child.signalCode ?? child.exitCode}) while starting:\n${log}`);
    }
    // Wait for OUR server's own ready line first: a PING alone could reach another process that
    // grabbed the port in the meantime.
    if (/ready to accept connections/i.test(log) && (await answersPing(port))) {
      const crash = async () => {
        child.kill("SIGKILL");
        await exited;
      };
      return { url: `redis://127.0.0.1:${port}`, ...(child.pid ? { pid: child.pid } : {}), stop, crash };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms:\n${log}`);
}

// One inline-protocol PING over a raw socket: no client library needed to know it is up.
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("utf8");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}
