// Where a proxy's p99 comes from: 2 × 2,000 sequential requests over one keep-alive connection
// (the second round is reported), the slowest 25 with the time they happened (ms since start),
// with SERVER_TIMING=1 the server's own view (bench/server-timing.mts), and per-thread CPU of the server during the
// reported round (V8's GC helper threads show up there).
// Usage: tsx bench/tail-latency.ts [json|stream] [server script, default ./tollgate-server.ts] [node flags for the server…]
//   e.g. tsx bench/tail-latency.ts json ./tollgate-server.ts --trace-gc
import { fork, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "undici";
import { startRedis } from "../test/support/redis-server.ts";
import { freePort } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE, CHAT_PATH, requestBody, requestHeaders } from "./lib/shared.ts";

const stream = process.argv[2] === "stream";
const serverScript = process.argv[3] ?? "./tollgate-server.ts";
const serverFlags = process.argv.slice(4);
const REQUESTS = 2000;

async function start(script: string, args: string[], execArgv: string[] = []): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(new URL(script, import.meta.url).pathname, [String(port), ...args], { execArgv: ["--import", "tsx", ...execArgv], stdio: "inherit" });
  await new Promise((ready) => child.once("message", ready));
  return { port, child };
}

function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    const fields = readFileSync(`/proc/${pid}/task/${thread}/stat`, "utf8").split(") ")[1]!.split(" ");
    ticks.set(thread, Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

const redis = await startRedis({ privateServer: true });
process.env[BENCH_REDIS_VARIABLE] = redis.url;
const upstream = await start("./fake-upstream.ts", []);
const startedAt = Date.now();
// The server's own view costs a little: a 1 ms event-loop timer and a hook per request.
const timing = process.env.SERVER_TIMING === "1" ? ["--import", "./bench/server-timing.mts"] : [];
const server = await start(serverScript, [`http://127.0.0.1:${upstream.port}`], [...timing, ...serverFlags]);
const client = new Client(`http://127.0.0.1:${server.port}`, { keepAliveTimeout: 60_000 });
const body = requestBody(stream);
let samples: { ms: number; at: number }[] = [];
let before = new Map<string, number>();
for (let round = 0; round < 2; round++) {
  samples = [];
  before = threadTicks(server.child.pid!);
  for (let i = 0; i < REQUESTS; i++) {
    const sent = process.hrtime.bigint();
    const response = await client.request({ path: CHAT_PATH, method: "POST", headers: requestHeaders, body });
    await response.body.dump({ limit: Infinity });
    samples.push({ ms: Number(process.hrtime.bigint() - sent) / 1e6, at: Date.now() - startedAt });
  }
}
const after = threadTicks(server.child.pid!);
const sorted = [...samples].sort((a, b) => a.ms - b.ms);
console.log(`client: p50 ${sorted[REQUESTS / 2]!.ms.toFixed(3)} p99 ${sorted[REQUESTS * 0.99]!.ms.toFixed(3)} max ${sorted.at(-1)!.ms.toFixed(3)} ms`);
console.log(`slowest (ms@when): ${sorted.slice(-25).map((sample) => `${sample.ms.toFixed(2)}@${sample.at}`).join(" ")}`);
const cpu = [...after].map(([thread, ticks]) => (ticks - (before.get(thread) ?? 0)) * 10).filter((ms) => ms > 0);
console.log(`server CPU in the reported round by thread (ms, main first): ${cpu.join(", ")}`);
await client.close();
server.child.kill("SIGTERM");
await new Promise((exited) => server.child.once("exit", exited));
upstream.child.kill("SIGTERM");
await redis.stop();
process.exit(0);
