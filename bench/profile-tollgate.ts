// Profiles tollgate under load: fake upstream + Redis + tollgate (with --cpu-prof) + autocannon.
// Usage: tsx bench/profile-tollgate.ts [json|stream] [seconds]  → prints the top self-time functions.
import { fork } from "node:child_process";
import { readdirSync, readFileSync, rmSync, mkdirSync } from "node:fs";
import { startRedis } from "../test/support/redis-server.ts";
import { throughput } from "./lib/load.ts";
import { freePort } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE } from "./lib/shared.ts";

const mode = process.argv[2] ?? "json";
const seconds = Number(process.argv[3] ?? 5);
const dir = "/tmp/prof";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

function start(script: string, args: string[], execArgv: string[] = []) {
  return new Promise<{ port: number; child: ReturnType<typeof fork> }>(async (resolve) => {
    const port = await freePort();
    const child = fork(new URL(script, import.meta.url).pathname, [String(port), ...args], { execArgv: ["--import", "tsx", ...execArgv], stdio: "inherit" });
    child.once("message", () => resolve({ port, child }));
  });
}

const redis = await startRedis({ privateServer: true });
process.env[BENCH_REDIS_VARIABLE] = redis.url;
const upstream = await start("./fake-upstream.ts", []);
const tollgate = await start("./tollgate-server.ts", [`http://127.0.0.1:${upstream.port}`], ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
const url = `http://127.0.0.1:${tollgate.port}`;
await throughput(url, mode === "stream", 2);
const result = await throughput(url, mode === "stream", seconds);
console.log(`${mode}: ${Math.round(result.rps)} req/s`);
tollgate.child.kill("SIGTERM");
await new Promise((resolve) => tollgate.child.once("exit", resolve));
upstream.child.kill("SIGTERM");
await redis.stop();

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };
const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"))!;
const profile = JSON.parse(readFileSync(`${dir}/${file}`, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
// Only the measured run: start-up (module loading, tiktoken's ranks) and warm-up are left out.
let elapsed = 0;
const times = profile.timeDeltas.map((delta) => (elapsed += delta));
const measuredFrom = elapsed - (seconds + 0.5) * 1e6;
profile.samples = profile.samples.filter((_, index) => times[index]! >= measuredFrom);
const self = new Map<string, number>();
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
for (const sample of profile.samples) {
  const node = byId.get(sample)!;
  const where = `${node.callFrame.functionName || "(anon)"} ${node.callFrame.url.replace(/^.*node_modules\//, "~/").replace(/^file:\/\/\/work\/main\//, "")}:${node.callFrame.lineNumber}`;
  self.set(where, (self.get(where) ?? 0) + 1);
}
const total = profile.samples.length;
// By package/file too.
const byFile = new Map<string, number>();
for (const [where, count] of self) {
  const fileName = where.split(" ")[1]!.split(":")[0]!.replace(/^(~\/(@[^/]+\/)?[^/]+).*/, "$1");
  byFile.set(fileName, (byFile.get(fileName) ?? 0) + count);
}
console.log("top files:");
for (const [name, count] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${((count / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
console.log("top functions:");
for (const [where, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${((count / total) * 100).toFixed(1).padStart(5)}%  ${where}`);

// Who calls the top native functions (three frames up), since their own frames say little.
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const counts = new Map<number, number>();
for (const sample of profile.samples) counts.set(sample, (counts.get(sample) ?? 0) + 1);
for (const name of (process.env.PROFILE_CALLERS ?? "writev,writeUtf8String,createAbortSignal,(garbage collector)").split(",")) {
  const callers = new Map<string, number>();
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== name) continue;
    const chain: string[] = [];
    let at = parent.get(node.id);
    for (let depth = 0; depth < 11 && at !== undefined; depth++) {
      const frame = byId.get(at)!.callFrame;
      chain.push(`${frame.functionName || "(anon)"}@${frame.url.replace(/^.*node_modules\//, "~/").replace(/^file:\/\/\/work\/main\//, "").replace(/^node:internal\//, "")}:${frame.lineNumber}`);
      at = parent.get(at);
    }
    const key = chain.join(" < ");
    callers.set(key, (callers.get(key) ?? 0) + (counts.get(node.id) ?? 0));
  }
  console.log(`callers of ${name}:`);
  for (const [chain, count] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`  ${((count / total) * 100).toFixed(1)}%  ${chain}`);
}

// Inclusive time of tollgate's own functions (a function's samples plus its callees').
const inclusive = new Map<string, number>();
for (const node of profile.nodes) {
  const own = counts.get(node.id) ?? 0;
  if (!own) continue;
  const seen = new Set<string>();
  for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at)!.callFrame;
    if (!/\/work\/main\/(src|adapters|policies)\//.test(frame.url)) continue;
    const key = `${frame.functionName || "(anon)"} ${frame.url.replace(/^file:\/\/\/work\/main\//, "")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + own);
  }
}
console.log("tollgate functions, inclusive:");
for (const [where, count] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${((count / total) * 100).toFixed(1).padStart(5)}%  ${where}`);
