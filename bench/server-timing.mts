// Preloaded into a server under test (node --import ./bench/server-timing.mts): on SIGTERM it
// prints, for the last 2,000 requests, how long each spent inside the server (request event →
// response finished) and the gap from one response's end to the next request, plus the event
// loop's delay. Used by bench/tail-latency.ts to tell a slow server from a slow machine.
import http from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const inServer: number[] = [];
const gaps: number[] = [];
let lastFinish = 0n;

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
  if (event === "request") {
    const start = process.hrtime.bigint();
    if (lastFinish) gaps.push(Number(start - lastFinish) / 1e6);
    (args[1] as http.ServerResponse).once("finish", () => {
      lastFinish = process.hrtime.bigint();
      inServer.push(Number(lastFinish - start) / 1e6);
    });
  }
  return Reflect.apply(emit, this, [event, ...args]) as boolean;
};

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]?.toFixed(3) ?? "–";
process.prependOnceListener("SIGTERM", () => {
  const last = inServer.slice(-2000);
  const lastGaps = gaps.slice(-2000);
  console.error(
    `[server-timing] in server p50 ${percentile(last, 0.5)} p99 ${percentile(last, 0.99)} ms; ` +
      `response end → next request p50 ${percentile(lastGaps, 0.5)} p99 ${percentile(lastGaps, 0.99)} ms; ` +
      `event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(2)} p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms`,
  );
  // A listener takes SIGTERM's default away: exit here unless the server has its own.
  if (process.listenerCount("SIGTERM") === 0) process.exit(0);
});
