// A/B for performance work: tollgate from another checkout (A, e.g. a `git worktree` of main) and
// from this one (B), each in its own process with its own Redis, under the same 32-connection
// load, interleaved round by round. Prints each side's median server CPU per request (from
// /proc), which is what the throughput ratios follow on a CPU-bound machine. Single runs on this
// machine vary by ±10% or more; alternating A and B puts that drift on both. Then, the same way,
// each side's median p50 and p99 over rounds of sequential requests on one connection (latency,
// which CPU per request does not show: a change can add a wait without adding work).
// Usage: tsx bench/compare-cpu.ts <other checkout> [rounds=6] [seconds=3]   (Linux only)
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { startRedis } from "../test/support/redis-server.ts";
import { sequential, throughput } from "./lib/load.ts";
import { percentile } from "./lib/stats.ts";
import { freePort } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE } from "./lib/shared.ts";

const [other, roundsArg, secondsArg] = process.argv.slice(2);
if (!other) throw new Error("usage: tsx bench/compare-cpu.ts <other checkout> [rounds] [seconds]");
const rounds = Number(roundsArg ?? 6);
const seconds = Number(secondsArg ?? 3);

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

async function start(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(script, [String(port), ...args], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "ignore", "ipc"], env });
  await new Promise((ready) => child.once("message", ready));
  return { port, child };
}

const upstream = await start(new URL("./fake-upstream.ts", import.meta.url).pathname, []);
const origin = `http://127.0.0.1:${upstream.port}`;
const sides = [];
for (const [name, root] of [["A", resolve(other)], ["B", resolve(new URL("..", import.meta.url).pathname)]] as const) {
  const redis = await startRedis({ privateServer: true });
  const server = await start(`${root}/bench/tollgate-server.ts`, [origin], { ...process.env, [BENCH_REDIS_VARIABLE]: redis.url });
  sides.push({ name, root, redis, server, samples: { json: [] as number[], stream: [] as number[] }, latency: { json: [] as number[][], stream: [] as number[][] } });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const stream of [false, true]) for (const side of sides) await throughput(`http://127.0.0.1:${side.server.port}`, stream, 1);
for (let round = 0; round < rounds; round++) {
  for (const stream of [false, true]) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const pid = side.server.child.pid!;
      const before = cpuMicros(pid);
      const result = await throughput(`http://127.0.0.1:${side.server.port}`, stream, seconds);
      side.samples[stream ? "stream" : "json"].push((cpuMicros(pid) - before) / (result.rps * seconds));
    }
  }
}
for (let round = 0; round < rounds; round++) {
  for (const stream of [false, true]) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const { total } = await sequential(`http://127.0.0.1:${side.server.port}`, stream, 1000);
      side.latency[stream ? "stream" : "json"].push([percentile(total, 50), percentile(total, 99)]);
    }
  }
}
for (const side of sides) {
  console.log(`${side.name} ${side.root}: json ${median(side.samples.json).toFixed(0)} µs/request, stream ${median(side.samples.stream).toFixed(0)} µs/request`);
  const at = (mode: "json" | "stream", index: 0 | 1) => median(side.latency[mode].map((pair) => pair[index]!)).toFixed(3);
  console.log(`${side.name} latency (ms, 1 client): json p50 ${at("json", 0)} p99 ${at("json", 1)}, stream p50 ${at("stream", 0)} p99 ${at("stream", 1)}`);
}
const [a, b] = sides;
console.log(`B ÷ A: json ${(median(b!.samples.json) / median(a!.samples.json)).toFixed(3)}, stream ${(median(b!.samples.stream) / median(a!.samples.stream)).toFixed(3)}`);
for (const side of sides) {
  side.server.child.kill("SIGTERM");
  await side.redis.stop();
}
upstream.child.kill("SIGTERM");
process.exit(0);
