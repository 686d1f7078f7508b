// Constants shared by the runner, the load functions and the server processes.
import { createHash } from "node:crypto";

export const BENCH_KEY = "bench-key";
export const CHAT_PATH = "/v1/chat/completions";

const baseBody = {
  model: "bench",
  messages: [{ role: "user", content: "Say hello" }],
  max_tokens: 16,
};

/** The request body a client sends, as a string (sent byte-identically to every target). */
export function requestBody(stream: boolean): string {
  return JSON.stringify(stream ? { ...baseBody, stream: true } : baseBody);
}

export const requestHeaders: Record<string, string> = {
  "content-type": "application/json",
  authorization: `Bearer ${BENCH_KEY}`,
};

/** The raw config object tollgate is started with. */
/** The variable the tollgate child reads its Redis address from (metering writes there). */
export const BENCH_REDIS_VARIABLE = "TOLLGATE_BENCH_REDIS_URL";

export function tollgateConfig(upstreamPort: number): unknown {
  const hash = createHash("sha256").update(BENCH_KEY).digest("hex");
  return {
    providers: {
      fake: {
        type: "openai-compatible",
        baseUrl: `http://127.0.0.1:${upstreamPort}/v1`,
        // Priced, so every request's record carries a real cost computation.
        pricing: { default: { inputPerMillion: 0.1, outputPerMillion: 0.4 } },
      },
    },
    // A budget on the route (never reached): every request is admitted through the atomic
    // reserve script and settled after, as on a production route.
    // BENCH_NO_BUDGET=1 and BENCH_LEDGER=file take them out, to see what each costs.
    routes: {
      bench: {
        targets: [{ provider: "fake", model: "bench-model" }],
        ...(process.env.BENCH_NO_BUDGET === "1" ? {} : { budget: { usd: 1_000_000, window: "day" } }),
      },
    },
    keys: [{ id: "bench", team: "bench", hash: `sha256:${hash}` }],
    store:
      process.env.BENCH_LEDGER === "file"
        ? { path: `${process.env.TMPDIR ?? "/tmp"}/tollgate-bench-ledger-${process.pid}.jsonl` }
        : { redisUrl: { env: BENCH_REDIS_VARIABLE }, keyPrefix: "bench:" },
  };
}

/** Message a server child process sends over IPC once it listens (or cannot start). */
export type ChildMessage =
  | { type: "ready"; port: number }
  | { type: "unavailable"; reason: string };

/** Port from argv[2] or env PORT; 0 lets the OS pick. */
export function portFromArgs(): number {
  return Number(process.argv[2] ?? process.env.PORT ?? 0);
}

/** Upstream origin for the proxies, from argv[3] or env UPSTREAM (e.g. http://127.0.0.1:4000). */
export function upstreamFromArgs(): URL {
  const raw = process.argv[3] ?? process.env.UPSTREAM;
  if (!raw) throw new Error("upstream origin missing: pass it as argv[3] or env UPSTREAM");
  return new URL(raw);
}

/** Tells the parent runner (over IPC) that this server is ready or cannot run. */
export function announce(msg: ChildMessage): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) return Promise.resolve(void console.log(JSON.stringify(msg)));
  return new Promise((resolve) => send(msg, undefined, {}, () => resolve()));
}
