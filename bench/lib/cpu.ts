// Detects CPU use by processes outside the benchmark (other builds and tests on the same machine)
// during a measurement, from /proc (Linux). Elsewhere it reports NaN and nothing is retried.
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const TICKS_PER_S = 100; // USER_HZ; /proc/stat and /proc/<pid>/stat both count in it

interface Snapshot {
  busy: number; // all CPUs' non-idle ticks
  own: number; // ticks used by our processes
  at: bigint;
}

function busyTicks(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  return user + nice + system + irq + softirq + steal;
}

function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

export function snapshot(pids: number[]): Snapshot | undefined {
  try {
    return { busy: busyTicks(), own: pids.reduce((a, p) => a + processTicks(p), 0), at: process.hrtime.bigint() };
  } catch {
    return undefined;
  }
}

/** Average number of CPU cores that processes other than `pids` kept busy between two snapshots. */
export function foreignCores(a: Snapshot | undefined, b: Snapshot | undefined): number {
  if (!a || !b) return NaN;
  const seconds = Number(b.at - a.at) / 1e9;
  return Math.max(0, (b.busy - a.busy - (b.own - a.own)) / TICKS_PER_S / seconds);
}

/** The processes (other than `pids`) using the most CPU over the next `ms` milliseconds. */
export async function busiestOthers(pids: number[], ms = 1000): Promise<{ pid: number; cores: number; command: string }[]> {
  let list: string[];
  try {
    list = readdirSync("/proc").filter((d) => /^\d+$/.test(d) && !pids.includes(Number(d)));
  } catch {
    return [];
  }
  const before = new Map(list.map((d) => [d, processTicks(Number(d))]));
  await sleep(ms);
  return list
    .map((d) => ({ pid: Number(d), cores: (processTicks(Number(d)) - before.get(d)!) / TICKS_PER_S / (ms / 1000), command: commandOf(d) }))
    .filter((p) => p.cores >= 0.05)
    .sort((a, b) => b.cores - a.cores)
    .slice(0, 3);
}

function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim().slice(0, 100);
  } catch {
    return "?";
  }
}
