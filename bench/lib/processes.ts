// Starts each server under test in its own child process (node --import tsx), waits for its
// "ready" IPC message, and stops it afterwards. Child output goes to bench/results/<name>.log.
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, openSync, closeSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import type { ChildMessage } from "./shared.ts";

const benchDir = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const logDir = fileURLToPath(new URL("../results/", import.meta.url));

export interface ServerProcess {
  name: string;
  pid: number;
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Forks bench/<script> with argv [port, ...args]. Resolves with the server once it is ready,
 * or with { unavailable } when the child says it cannot run (e.g. tollgate not written yet).
 */
export async function startServer(
  name: string,
  script: string,
  args: string[] = [],
  timeoutMs = 30_000,
): Promise<ServerProcess | { unavailable: string }> {
  mkdirSync(logDir, { recursive: true });
  const logFd = openSync(`${logDir}${name}.log`, "w");
  const port = await freePort();
  const child = fork(`${benchDir}${script}`, [String(port), ...args], {
    cwd: repoRoot, // so that `--import tsx` resolves from the project's node_modules
    execArgv: ["--import", "tsx"],
    env: { ...process.env, PORT: String(port), NODE_ENV: "production" },
    stdio: ["ignore", logFd, logFd, "ipc"],
  });
  closeSync(logFd);
  const msg = await new Promise<ChildMessage | { type: "exit"; code: number | null }>((resolve) => {
    const timer = setTimeout(() => resolve({ type: "unavailable", reason: `not ready after ${timeoutMs} ms` }), timeoutMs);
    child.once("message", (m) => (clearTimeout(timer), resolve(m as ChildMessage)));
    child.once("exit", (code) => (clearTimeout(timer), resolve({ type: "exit", code })));
  });
  if (msg.type !== "ready") {
    await kill(child);
    const reason = msg.type === "exit" ? `exited with code ${msg.code} (see bench/results/${name}.log)` : msg.reason;
    return { unavailable: reason };
  }
  child.channel?.unref();
  return { name, pid: child.pid!, port: msg.port, url: `http://127.0.0.1:${msg.port}`, stop: () => kill(child) };
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 3_000);
    child.once("exit", () => (clearTimeout(force), resolve()));
    child.kill("SIGTERM");
  });
}
