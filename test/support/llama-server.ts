// Starts a real llama.cpp llama-server on a tiny hand-wired model, for tests that need a real
// local decoder. The binary comes from scripts/fetch-llama-server.sh (cached outside the repo);
// the model from scripts/make-tiny-gguf.mjs. Greedy decoding of any prompt answers exactly
// TINY_LOCAL_ANSWER (TINY_LOCAL_ANSWER_TOKENS completion tokens, then EOS).
//
// Usage (top-level await, so vitest knows at collection time whether to skip):
//   const decoder = await startLlamaServer();
//   describe.skipIf("skipped" in decoder)("...", () => { ... });
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { gracefulStop, killOnProcessExit } from "./child-process.ts";
import { startTestGateway, testConfig, type TestGateway } from "./gateway.ts";

export interface LlamaServer {
  baseUrl: string; // OpenAI-compatible API root, e.g. http://127.0.0.1:PORT/v1
  origin: string; // http://127.0.0.1:PORT, for /health, /slots, /metrics
  model: "tiny-local";
  stop(): Promise<void>;
}

export const TINY_LOCAL_ANSWER = "Hello from a real local decoder.";
export const TINY_LOCAL_ANSWER_TOKENS = 8;

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FETCH_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
// A failed fetch is remembered for a while, so that each test file does not wait for it again.
const FETCH_FAILURE_TTL_MS = 10 * 60_000;

// -c 2048 shared by -np 4 gives four parallel slots of 512 tokens: room for concurrency tests.
const SERVER_ARGS = ["--host", "127.0.0.1", "--port", "0", "-c", "2048", "-np", "4", "-t", "2"];

type Found = { path: string } | { skipped: string };

/** `extraArgs` go to llama-server's command line, e.g. `["--chat-template-file", path]`. */
export async function startLlamaServer(extraArgs: string[] = []): Promise<LlamaServer | { skipped: string }> {
  const runner = await findOrFetchRunner();
  if ("skipped" in runner) {
    console.error(`!!! local-decoder tests SKIPPED: ${runner.skipped}`);
    return runner;
  }
  // The decoder is installed from here on, so anything going wrong is a real failure: throw.
  return spawnServer(runner.path, ensureTinyModel(), extraArgs);
}

function cacheDir(): string {
  return process.env.TOLLGATE_CACHE_DIR ?? join(homedir(), ".cache", "tollgate");
}

/**
 * A real llama-server for a test file, and a gateway whose "local" route goes to it (the undici
 * transport, as in production), started before the file's tests and stopped after them. Top-level
 * await, so that vitest knows at collection time whether to skip: `describe.skipIf(rig.skipped)`.
 */
export async function useLlamaGateway(extraArgs: string[] = []) {
  const decoder = await startLlamaServer(extraArgs);
  const rig = { skipped: "skipped" in decoder, decoder: "skipped" in decoder ? undefined : decoder, gateway: undefined as unknown as TestGateway };
  beforeAll(async () => {
    if (rig.decoder) rig.gateway = await startTestGateway(testConfig(rig.decoder.baseUrl), "undici");
  });
  afterAll(async () => {
    await rig.gateway?.close();
    await rig.decoder?.stop();
  });
  return rig;
}

// ---- the binary ----

let fetchAttempt: Promise<Found> | undefined;

async function findOrFetchRunner(): Promise<Found> {
  const fromEnv = process.env.LLAMA_SERVER_BIN;
  if (fromEnv) {
    return isExecutable(fromEnv) ? { path: fromEnv } : { skipped: `LLAMA_SERVER_BIN=${fromEnv} is not executable` };
  }
  const dest = join(cacheDir(), "llama-server");
  const runner = join(dest, "run-llama-server");
  if (isExecutable(runner)) return { path: runner };
  fetchAttempt ??= fetchRunner(dest, runner); // at most one fetch per test process
  return fetchAttempt;
}

async function fetchRunner(dest: string, runner: string): Promise<Found> {
  const failureNote = join(cacheDir(), "llama-server-fetch-failed.txt");
  const recentFailure = readRecentFailure(failureNote);
  if (recentFailure) return { skipped: `${recentFailure} (remembered; delete ${failureNote} to retry now)` };

  console.error(`local decoder: fetching llama-server into ${dest} (at most ${FETCH_TIMEOUT_MS / 1000} s) ...`);
  const script = join(REPO_ROOT, "scripts", "fetch-llama-server.sh");
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile("bash", [script, dest], { timeout: FETCH_TIMEOUT_MS, killSignal: "SIGKILL" }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      if (error.killed) return resolve(`fetch-llama-server.sh timed out after ${FETCH_TIMEOUT_MS / 1000} s`);
      resolve(stderr.trim().split("\n").at(-1) || error.message);
    });
  });
  if (!failure && isExecutable(runner)) return { path: runner };

  const why = `llama-server not available: ${failure ?? `the fetch did not produce ${runner}`}`;
  try {
    mkdirSync(cacheDir(), { recursive: true });
    writeFileSync(failureNote, why);
  } catch {
    // Remembering the failure is only an optimisation.
  }
  return { skipped: why };
}

function readRecentFailure(note: string): string | undefined {
  try {
    const fresh = Date.now() - statSync(note).mtimeMs < FETCH_FAILURE_TTL_MS;
    return fresh ? readFileSync(note, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// ---- the model ----

// The file name carries a hash of the generator, so editing the generator rebuilds the model.
function ensureTinyModel(): string {
  const generator = join(REPO_ROOT, "scripts", "make-tiny-gguf.mjs");
  const hash = createHash("sha256").update(readFileSync(generator)).digest("hex").slice(0, 12);
  const model = join(cacheDir(), `tiny-local-${hash}.gguf`);
  if (existsSync(model)) return model;

  mkdirSync(cacheDir(), { recursive: true });
  // Build under a private name, then rename: parallel test files may race to build it.
  const partial = `${model}.${process.pid}.partial`;
  execFileSync(process.execPath, [generator, partial], { stdio: ["ignore", "ignore", "inherit"] });
  renameSync(partial, model);
  return model;
}

// ---- the process ----

async function spawnServer(runner: string, model: string, extraArgs: string[]): Promise<LlamaServer> {
  const child = spawn(runner, ["-m", model, ...SERVER_ARGS, "--alias", "tiny-local", "--no-webui", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = keepLogTail(child);
  // A child that could not be spawned at all emits "error" and possibly never "exit".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  killOnProcessExit(child);

  const stop = gracefulStop(child, exited, STOP_GRACE_MS);

  try {
    const origin = await waitForListening(child, log);
    await waitForHealthy(origin, child, log);
    return { baseUrl: `${origin}/v1`, origin, model: "tiny-local", stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface LogTail {
  text(): string;
  onData(listener: () => void): () => void;
}

// The pipes must be drained for the server's whole life (it logs every request and would block
// on a full pipe); only the last part is kept, for error messages.
function keepLogTail(child: ChildProcess): LogTail {
  const maxChars = 20_000;
  let tail = "";
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-maxChars);
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  return {
    text: () => tail,
    onData(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function waitForListening(child: ChildProcess, log: LogTail): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log.text());
      if (match?.[1]) finish(() => resolve(match[1] as string));
    };
    const onExit = (code: number | null, signal: string | null) =>
      finish(() => reject(new Error(`llama-server exited (${signal ?? code}) before listening:\n${log.text()}`)));
    const onError = (error: Error) => finish(() => reject(new Error(`cannot run llama-server: ${error.message}`)));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`llama-server did not listen within ${START_TIMEOUT_MS} ms:\n${log.text()}`))),
      START_TIMEOUT_MS,
    );
    const unsubscribe = log.onData(check);
    child.once("exit", onExit);
    child.once("error", onError);
    function finish(settle: () => void) {
      clearTimeout(timer);
      unsubscribe();
      child.off("exit", onExit);
      child.off("error", onError);
      settle();
    }
    check();
  });
}

// /health answers 503 while the model loads and 200 {"status":"ok"} once requests are served.
async function waitForHealthy(origin: string, child: ChildProcess, log: LogTail): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`llama-server exited before becoming healthy:\n${log.text()}`);
    }
    const response = await fetch(`${origin}/health`).catch(() => undefined);
    if (response) {
      await response.arrayBuffer().catch(() => undefined); // release the connection
      if (response.ok) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`llama-server at ${origin} was not healthy within ${START_TIMEOUT_MS} ms:\n${log.text()}`);
}

// If the test process ends without calling stop(), do not leave servers behind.
