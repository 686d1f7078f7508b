// Server CPU per request, which the throughput ratios follow on a CPU-bound machine: each server
// (and Redis, for tollgate) under the same 32-connection load, CPU time read from /proc.
// Usage: tsx bench/cpu-per-request.ts [seconds]   (Linux only)
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { startRedis } from "../test/support/redis-server.ts";
import { throughput } from "./lib/load.ts";
import { freePort } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE } from "./lib/shared.ts";

const seconds = Number(process.argv[2] ?? 5);
const TICKS_PER_SECOND = 100;

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6; // utime + stime
}

async function start(script: string, args: string[]): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(new URL(script, import.meta.url).pathname, [String(port), ...args], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "ignore", "ipc"] });
  await new Promise((resolve) => child.once("message", resolve));
  return { port, child };
}

const redis = await startRedis({ privateServer: true });
process.env[BENCH_REDIS_VARIABLE] = redis.url;
const upstream = await start("./fake-upstream.ts", []);
const origin = `http://127.0.0.1:${upstream.port}`;
const servers = {
  "bare Hono": await start("./bare-hono-proxy.ts", [origin]),
  tollgate: await start("./tollgate-server.ts", [origin]),
};
for (const stream of [false, true]) {
  for (const [name, server] of Object.entries(servers)) {
    const url = `http://127.0.0.1:${server.port}`;
    await throughput(url, stream, 2);
    const pids = [server.child.pid!, ...(name === "tollgate" && redis.pid ? [redis.pid] : [])];
    const before = pids.map(cpuMicros);
    const result = await throughput(url, stream, seconds);
    const used = pids.map((pid, index) => cpuMicros(pid) - before[index]!);
    const requests = result.rps * seconds;
    const perRequest = used.map((micros) => Math.round(micros / requests));
    console.log(`${stream ? "stream" : "json  "} ${name.padEnd(9)} ${Math.round(result.rps)} req/s, server ${perRequest[0]} µs/request${perRequest[1] !== undefined ? `, Redis ${perRequest[1]} µs/request` : ""}`);
  }
}
for (const server of [...Object.values(servers), upstream]) server.child.kill("SIGTERM");
await redis.stop();
process.exit(0);
