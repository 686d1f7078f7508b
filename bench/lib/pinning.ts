// BENCH_PIN=1: gives the load generator, the fake upstream, Redis and the server under test CPUs
// of their own (Linux `taskset`), so that no process's speed depends on what its neighbours do.
// On a 2-core machine everything shares both cores and a proxy's figures include the time it
// waits for the load generator, the upstream and Redis; on a server with spare cores, pinning
// measures each proxy on its own cores, as it would run in production.
import { execFileSync } from "node:child_process";
import os from "node:os";

/** Which CPUs each role gets. Every server under test gets the same set; one is loaded at a time. */
export const PIN_LAYOUT = {
  runner: "0-1", // load generator (autocannon and the latency client), single-threaded JS
  upstream: "2-3",
  redis: "4",
  server: "6-7", // main thread + Node's helper threads (GC, libuv)
} as const;
export type PinRole = keyof typeof PIN_LAYOUT;

const MIN_CPUS = 8;

/** Whether BENCH_PIN asks for pinning; throws when it does and the machine cannot give it. */
export function pinningWanted(): boolean {
  if (process.env.BENCH_PIN !== "1") return false;
  const cpus = os.availableParallelism();
  if (cpus < MIN_CPUS) throw new Error(`BENCH_PIN=1 needs at least ${MIN_CPUS} CPUs; this machine has ${cpus}. Unset BENCH_PIN.`);
  return true;
}

/** Binds every thread of `pid` to the role's CPUs (threads it starts later inherit the binding). */
export function pin(pid: number, role: PinRole): void {
  try {
    execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", PIN_LAYOUT[role], String(pid)], { stdio: "ignore" });
  } catch (error) {
    throw new Error(`BENCH_PIN=1: could not pin pid ${pid} (${role}) to CPUs ${PIN_LAYOUT[role]} with taskset (util-linux): ${String(error)}`);
  }
}

/** A line for the report saying where everything ran. */
export function describePinning(): string {
  return Object.entries(PIN_LAYOUT).map(([role, cpus]) => `${role} on CPU ${cpus}`).join(", ");
}
