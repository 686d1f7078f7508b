// Lifecycle of the real servers tests spawn (llama-server, redis-server): stopped gently when a
// test is done, and never left running when the test process exits.
import type { ChildProcess } from "node:child_process";

const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

/** SIGKILLs the child if the test process exits first (a failed test may never call stop()). */
export function killOnProcessExit(child: ChildProcess): void {
  if (!exitHookInstalled) {
    process.once("exit", () => liveChildren.forEach((c) => c.kill("SIGKILL")));
    exitHookInstalled = true;
  }
  liveChildren.add(child);
  child.once("exit", () => liveChildren.delete(child));
  child.once("error", () => liveChildren.delete(child));
}

/** A stop() that sends SIGTERM once, SIGKILLs after the grace period, and resolves on exit. */
export function gracefulStop(child: ChildProcess, exited: Promise<void>, graceMs: number): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const forceKill = setTimeout(() => child.kill("SIGKILL"), graceMs);
        await exited;
        clearTimeout(forceKill);
      }
    })();
    return stopping;
  };
}
