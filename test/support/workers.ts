// What the Workers e2e tests share: the Worker bundled as wrangler would (esbuild, workerd
// conditions), and a local OpenAI-compatible upstream that answers every request the same way
// (4 prompt tokens, 3 completion tokens), streamed or not. Model "slow-model" streams its two
// pieces of text `SLOW_STREAM_MS` apart (a stream that outlasts a reservation's TTL),
// "brief-model" `BRIEF_STREAM_MS` apart, "stall-model" sends its first piece and then
// nothing, connection open (a wedged decoder), and "drip-model" streams `DRIP_TOKENS` tokens
// `DRIP_EVERY_MS` apart (a long answer a client can leave half-way); `drips` says how each ended.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Readable } from "node:stream";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { CostRecord } from "../../src/metering/cost-record.ts";

export type EdgeUpstream = { url: string; drips: { sent: number; closedEarly: boolean }[]; close(): void };

export const SLOW_STREAM_MS = 7_000;
export const BRIEF_STREAM_MS = 800;
export const DRIP_TOKENS = 60;
export const DRIP_EVERY_MS = 100;

export async function startEdgeUpstream(): Promise<EdgeUpstream> {
  const drips: EdgeUpstream["drips"] = [];
  const upstream: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const { stream, model } = JSON.parse(body);
      const base = { id: "chatcmpl-edge", created: 1, model: "edge-model" };
      if (!stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "from the edge" }, finish_reason: "stop" }], usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } }));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (choices: unknown[], usage: unknown = null) => response.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, usage })}\n\n`);
      chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
      chunk([{ index: 0, delta: { content: "streamed" }, finish_reason: null }]);
      const rest = () => {
        chunk([{ index: 0, delta: { content: " at the edge" }, finish_reason: null }]);
        chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
        chunk([], { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
        response.end("data: [DONE]\n\n");
      };
      if (model === "stall-model") return;
      if (model === "drip-model") {
        const drip = { sent: 0, closedEarly: false };
        drips.push(drip);
        response.on("close", () => (drip.closedEarly = !response.writableEnded));
        const timer = setInterval(() => {
          if (drip.sent === DRIP_TOKENS) return void (clearInterval(timer), rest());
          chunk([{ index: 0, delta: { content: " word" }, finish_reason: null }]);
          drip.sent++;
        }, DRIP_EVERY_MS);
        response.on("close", () => clearInterval(timer));
        return;
      }
      if (model === "slow-model") setTimeout(rest, SLOW_STREAM_MS);
      else if (model === "brief-model") setTimeout(rest, BRIEF_STREAM_MS);
      else rest();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
    drips,
    close: () => {
      upstream.closeAllConnections();
      upstream.close();
    },
  };
}

export type WorkerBundle = {
  /** Miniflare's options for a Worker running this bundle, as wrangler.toml sets them. */
  options: { modules: true; modulesRoot: string; scriptPath: string; compatibilityDate: string; compatibilityFlags: string[] };
  remove(): void;
};

/** src/worker.ts bundled into one module, in a temporary folder. */
export async function bundleWorker(): Promise<WorkerBundle> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-worker-"));
  const script = join(dir, "worker.mjs");
  await build({
    entryPoints: [fileURLToPath(new URL("../../src/worker.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    outfile: script,
    logLevel: "silent",
  });
  return {
    options: { modules: true, modulesRoot: dir, scriptPath: script, ...deployedCompatibility() },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * wrangler.toml's compatibility date and flags, so the tests run the Worker as it is deployed:
 * without `enable_request_signal`, workerd tells a Worker nothing of a client that leaves.
 */
function deployedCompatibility(): { compatibilityDate: string; compatibilityFlags: string[] } {
  const toml = readFileSync(fileURLToPath(new URL("../../wrangler.toml", import.meta.url)), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  if (!date || flags === undefined) throw new Error("wrangler.toml has no compatibility_date or compatibility_flags");
  return { compatibilityDate: date, compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((match) => match[1]!) };
}

/** The cost records a Worker wrote to its log: one `{"type":"tollgate.cost_record","record":…}` line each. */
export function costRecordsInLog(log: string): CostRecord[] {
  return log
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type?: string; record?: CostRecord })
    .flatMap((entry) => (entry.type === "tollgate.cost_record" && entry.record ? [entry.record] : []));
}

/**
 * What a Worker writes to its log (workerd's stdout: cost records are lines there), for Miniflare's
 * `handleRuntimeStdio`. Its stderr is passed on to the test's own, or collected too.
 */
export function workerLog({ stderr = "pass" }: { stderr?: "pass" | "collect" | "drop" } = {}) {
  let text = "";
  return {
    handleRuntimeStdio(stdout: Readable, errors: Readable) {
      stdout.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      if (stderr === "collect") errors.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      else if (stderr === "pass") errors.on("data", (chunk: Buffer) => process.stderr.write(chunk));
      else errors.resume();
    },
    text: () => text,
  };
}
