// With REDIS_URL set, a port in use still stops start-up: the process exits 1 (a supervisor then
// restarts it). Used to be wrong: startGateway left the stores it had opened (the ioredis socket,
// the undici Agent, telemetry) open when listen() failed, and the process never exited. So did any
// other start-up error after Redis connected (telemetry's, the gateway's build).
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis, type RedisHandle } from "./support/redis-server.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin/tollgate.mjs");
let config: string;
let redisServer: RedisHandle;
let busy: net.Server;
let busyPort: number;

beforeAll(async () => {
  redisServer = await startRedis({ privateServer: true });
  const dir = mkdtempSync(join(tmpdir(), "review-diff-port-"));
  config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({
    providers: { openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, optional: true } },
    routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } },
    store: { redisUrl: { env: "REDIS_URL" }, path: join(dir, "ledger.jsonl") },
  }));
  busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  busyPort = (busy.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => busy.close(() => r()));
  await redisServer.stop();
});

/** Starts the CLI with REDIS_URL set; resolves when it exits, or 15 s on, killed, if it has not. */
function startWithRedis(env: Record<string, string>): Promise<{ exitCode?: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("node", [BIN, "--config", config], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", REDIS_URL: redisServer.url, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ stderr: stderr + "\n<still running 15 s after start>" });
    }, 15_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, stderr });
    });
  });
}

it("with REDIS_URL set, a port in use still stops start-up (the process exits 1)", async () => {
  const result = await startWithRedis({ PORT: String(busyPort) });
  expect(result.stderr).toContain(String(busyPort));
  expect(result.exitCode).toBe(1);
}, 30_000);

it("with REDIS_URL set, a start-up error after Redis connected (an OTLP endpoint that is not a URL) exits 1", async () => {
  const result = await startWithRedis({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" });
  expect(result.stderr).toMatch(/Could not parse user-provided export URL/);
  expect(result.exitCode).toBe(1);
}, 30_000);
