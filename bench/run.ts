// `npm run bench`: fake upstream, bare Hono proxy, raw Node proxy, the Hono + Redis floor and
// tollgate, each in its own process; R interleaved rounds of throughput (autocannon) and single-client latency; medians.
// Env: BENCH_ROUNDS (5), BENCH_SECONDS (5, per throughput run), BENCH_REQUESTS (2000 per latency run),
//      BENCH_CONNECTIONS (32), BENCH_FOREIGN_LIMIT (0.25 cores), BENCH_RETRIES (1),
//      BENCH_PIN (1: each role on CPUs of its own, on machines with 8 or more).
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { busiestOthers, foreignCores, snapshot } from "./lib/cpu.ts";
import { checkOnce, sequential, throughput } from "./lib/load.ts";
import { Redis } from "ioredis";
import { startRedis, type RedisHandle } from "../test/support/redis-server.ts";
import { describePinning, pin, pinningWanted } from "./lib/pinning.ts";
import { startServer, type ServerProcess } from "./lib/processes.ts";
import { BENCH_REDIS_VARIABLE } from "./lib/shared.ts";
import { formatReport, summarize, type Measurement, type Mode, type RoundResult, type TargetName } from "./lib/report.ts";
import { percentile, rotate } from "./lib/stats.ts";

const settings = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  requests: Number(process.env.BENCH_REQUESTS ?? 2000),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  /** A run during which other processes kept more than this many cores busy is repeated… */
  foreignLimit: Number(process.env.BENCH_FOREIGN_LIMIT ?? 0.25),
  /** …at most this many times; the least disturbed attempt is kept. */
  retries: Number(process.env.BENCH_RETRIES ?? 1),
};
const MODES = [false, true] as const; // stream?
const modeName = (stream: boolean): Mode => (stream ? "stream" : "json");
const log = (s: string) => process.stderr.write(s + "\n");

/** Starts every server; tollgate's absence or failure is reported, not fatal. */
async function startAll(servers: ServerProcess[]) {
  const started = (s: ServerProcess | { unavailable: string }, what: string): ServerProcess => {
    if ("unavailable" in s) throw new Error(`${what} did not start: ${s.unavailable}`);
    servers.push(s);
    return s;
  };
  const upstream = started(await startServer("fake-upstream", "fake-upstream.ts"), "fake upstream");
  const targets = new Map<TargetName, string>([["direct", upstream.url]]);
  targets.set("hono", started(await startServer("bare-hono", "bare-hono-proxy.ts", [upstream.url]), "bare Hono proxy").url);
  targets.set("raw", started(await startServer("raw-node", "raw-node-proxy.ts", [upstream.url]), "raw Node proxy").url);
  // Bare Hono plus only the Redis work a budgeted, metered gateway cannot skip: how far tollgate
  // is from what its contract costs on this stack (keys under {floor}, beside tollgate's).
  targets.set("floor", started(await startServer("redis-floor", "redis-floor-proxy.ts", [upstream.url]), "Hono + Redis floor").url);
  let tollgateNote: string | undefined;
  const tg = await startServer("tollgate", "tollgate-server.ts", [upstream.url]);
  if ("unavailable" in tg) tollgateNote = tg.unavailable;
  else targets.set("tollgate", started(tg, "tollgate").url);

  for (const [name, url] of targets) {
    for (const stream of MODES) {
      const problem = await checkOnce(url, stream);
      if (!problem) continue;
      if (name !== "tollgate") throw new Error(`${name} (${modeName(stream)}) answers wrongly: ${problem}`);
      tollgateNote = `its ${modeName(stream)} answer failed the check: ${problem}`;
      targets.delete("tollgate");
      break;
    }
  }
  return { targets, tollgateNote };
}

/** Runs `fn`, repeating it while other processes were busy; keeps the least disturbed attempt. */
async function undisturbed<T>(pids: number[], fn: () => Promise<T>) {
  let best: { value: T; foreign: number } | undefined;
  let attempts = 0;
  while (attempts <= settings.retries) {
    if (attempts++ > 0) await sleep(1000); // give a burst elsewhere time to pass
    const before = snapshot(pids);
    const value = await fn();
    const foreign = foreignCores(before, snapshot(pids));
    if (!best || foreign < best.foreign) best = { value, foreign };
    if (!(foreign > settings.foreignLimit)) break;
  }
  return { ...best!, attempts };
}

async function runRound(r: number, targets: Map<TargetName, string>, pids: number[]): Promise<RoundResult> {
  const order = rotate([...targets.keys()], r);
  const round: RoundResult = { order, results: {} };
  const slot = (n: TargetName, stream: boolean): Measurement =>
    ((round.results[n] ??= {})[modeName(stream)] ??= { attempts: 0 } as Measurement);
  for (const stream of MODES) {
    for (const n of order) {
      await sleep(200); // let the previous run's sockets close
      const t = await undisturbed(pids, () => throughput(targets.get(n)!, stream, settings.seconds, settings.connections));
      const m = slot(n, stream);
      Object.assign(m, { rps: t.value.rps, non2xx: t.value.non2xx, errors: t.value.errors, foreignTput: t.foreign });
      m.attempts += t.attempts;
    }
  }
  for (const stream of MODES) {
    for (const n of order) {
      const s = await undisturbed(pids, () => sequential(targets.get(n)!, stream, settings.requests));
      const m = slot(n, stream);
      Object.assign(m, {
        p50: percentile(s.value.total, 50),
        p99: percentile(s.value.total, 99),
        ...(stream ? { ttftP50: percentile(s.value.ttft, 50) } : {}),
        foreignLat: s.foreign,
      });
      m.non2xx += s.value.failures;
      m.attempts += s.attempts;
    }
  }
  return round;
}

/** Cost records tollgate wrote to the bench Redis since `since`: proof that metering ran on every request. */
async function meteredRecords(redis: RedisHandle, since: Date): Promise<number> {
  const client = new Redis(redis.url);
  try {
    // Records are kept by UTC day: a run that crosses midnight wrote to two.
    let total = 0;
    for (let day = new Date(since.toISOString().slice(0, 10)); day.getTime() <= Date.now(); day = new Date(day.getTime() + 86_400_000)) {
      total += await client.llen(`bench:{tollgate:${day.toISOString().slice(0, 10)}}:records`);
    }
    return total;
  } finally {
    client.disconnect();
  }
}

async function main(): Promise<void> {
  const servers: ServerProcess[] = [];
  // tollgate meters every request into this Redis, as a platform deployment would. A private
  // server, even when REDIS_URL is set: a run writes hundreds of thousands of records.
  const pinned = pinningWanted();
  const startedAt = new Date();
  const redis = await startRedis({ privateServer: true });
  process.env[BENCH_REDIS_VARIABLE] = redis.url;
  try {
    const { targets, tollgateNote } = await startAll(servers);
    if (pinned) {
      pin(process.pid, "runner");
      if (redis.pid) pin(redis.pid, "redis");
      for (const server of servers) pin(server.pid, server.name === "fake-upstream" ? "upstream" : "server");
      log(`pinned: ${describePinning()}`);
    }
    if (tollgateNote) log(`tollgate NOT measured: ${tollgateNote}`);
    const pids = [process.pid, ...servers.map((s) => s.pid), ...(redis.pid ? [redis.pid] : [])];
    const loadBefore = os.loadavg();
    log(`targets: ${[...targets.keys()].join(", ")}; ${settings.rounds} rounds, ${settings.seconds}s per throughput run, ` +
      `${settings.requests} sequential requests per latency run; ${os.cpus().length} CPUs, loadavg ${loadBefore.map((l) => l.toFixed(2)).join(" ")}`);

    const othersAtStart = await busiestOthers(pids);
    for (const o of othersAtStart) log(`note: another process is busy: pid ${o.pid} at ${o.cores.toFixed(2)} cores: ${o.command}`);

    log("warm-up…");
    for (const url of targets.values()) {
      for (const stream of MODES) {
        await throughput(url, stream, Math.min(2, settings.seconds), settings.connections);
        await sequential(url, stream, Math.min(500, settings.requests));
      }
    }
    const rounds: RoundResult[] = [];
    for (let r = 0; r < settings.rounds; r++) {
      rounds.push(await runRound(r, targets, pids));
      log(`round ${r + 1}/${settings.rounds} done (order: ${rounds[r]!.order.join(", ")})`);
    }

    const result = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadavg: { before: loadBefore, after: os.loadavg() },
      othersAtStart,
      settings,
      pinning: pinned ? describePinning() : "none",
      tollgate: tollgateNote ? { measured: false, reason: tollgateNote } : { measured: true, metering: "Redis", recordsWritten: 0 },
      summary: summarize(rounds, [...targets.keys()], settings.foreignLimit),
      rounds,
    };
    if (result.tollgate.measured) {
      // Stopping tollgate first flushes its ledger, so the count is complete.
      await Promise.all(servers.filter((server) => server.name === "tollgate").map((server) => server.stop()));
      result.tollgate = { measured: true, metering: "Redis", recordsWritten: await meteredRecords(redis, startedAt) };
      log(`metering: tollgate wrote ${result.tollgate.recordsWritten} cost records to Redis`);
    }
    console.log(formatReport(result));
    const dir = fileURLToPath(new URL("./results/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}latest.json`, JSON.stringify(result, null, 2) + "\n");
    log("wrote bench/results/latest.json");
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await redis.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
