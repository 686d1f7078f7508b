// How much of tollgate's distance from bare Hono is the Redis work any budgeted, metered gateway
// must do: bare Hono, bare Hono plus that work (redis-floor-proxy.ts), and tollgate, under the
// same 32-connection load, interleaved round by round. Prints median requests/s, server CPU per
// request (Redis's separately), and the ratios.
// Usage: tsx bench/metering-floor.ts [rounds=5] [seconds=3]   (Linux only: CPU from /proc)
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { startRedis, type RedisHandle } from "../test/support/redis-server.ts";
import { throughput } from "./lib/load.ts";
import { freePort } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE } from "./lib/shared.ts";

const rounds = Number(process.argv[2] ?? 5);
const seconds = Number(process.argv[3] ?? 3);

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

async function start(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(new URL(script, import.meta.url).pathname, [String(port), ...args], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "ignore", "ipc"], env });
  await new Promise((ready) => child.once("message", ready));
  return { port, child };
}

type Side = { name: string; port: number; child: ChildProcess; redis?: RedisHandle; rps: Record<string, number[]>; cpu: Record<string, number[]>; redisCpu: Record<string, number[]> };
const upstream = await start("./fake-upstream.ts", []);
const origin = `http://127.0.0.1:${upstream.port}`;
const sides: Side[] = [];
for (const [name, script] of [["bare Hono", "./bare-hono-proxy.ts"], ["bare Hono + Redis floor", "./redis-floor-proxy.ts"], ["tollgate", "./tollgate-server.ts"]] as const) {
  const redis = script === "./bare-hono-proxy.ts" ? undefined : await startRedis({ privateServer: true });
  const server = await start(script, [origin], redis ? { ...process.env, [BENCH_REDIS_VARIABLE]: redis.url } : process.env);
  sides.push({ name, ...server, ...(redis ? { redis } : {}), rps: { json: [], stream: [] }, cpu: { json: [], stream: [] }, redisCpu: { json: [], stream: [] } });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const stream of [false, true]) for (const side of sides) await throughput(`http://127.0.0.1:${side.port}`, stream, 1);
for (let round = 0; round < rounds; round++) {
  for (const mode of ["json", "stream"] as const) {
    const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
    for (const side of order) {
      const pids = [side.child.pid!, side.redis?.pid].filter((pid): pid is number => pid !== undefined);
      const before = pids.map(cpuMicros);
      const result = await throughput(`http://127.0.0.1:${side.port}`, mode === "stream", seconds);
      const used = pids.map((pid, index) => cpuMicros(pid) - before[index]!);
      const requests = result.rps * seconds;
      side.rps[mode]!.push(result.rps);
      side.cpu[mode]!.push(used[0]! / requests);
      if (used[1] !== undefined) side.redisCpu[mode]!.push(used[1] / requests);
    }
  }
}
for (const mode of ["json", "stream"]) {
  const hono = median(sides[0]!.rps[mode]!);
  for (const side of sides) {
    const redisPart = side.redisCpu[mode]!.length ? `, Redis ${median(side.redisCpu[mode]!).toFixed(0)} µs` : "";
    console.log(`${mode.padEnd(6)} ${side.name.padEnd(24)} ${median(side.rps[mode]!).toFixed(0).padStart(6)} req/s (${(median(side.rps[mode]!) / hono).toFixed(2)} of bare Hono), server ${median(side.cpu[mode]!).toFixed(0)} µs/request${redisPart}`);
  }
  console.log(`${mode.padEnd(6)} tollgate ÷ Redis floor: ${(median(sides[2]!.rps[mode]!) / median(sides[1]!.rps[mode]!)).toFixed(2)}`);
}
for (const side of sides) {
  side.child.kill("SIGTERM");
  await side.redis?.stop();
}
upstream.child.kill("SIGTERM");
process.exit(0);
