// For tests of the gateway as an operator runs it: a scripted OpenAI-compatible upstream, the
// real CLI spawned with a config (and signalled), and a TCP proxy in front of Redis that can be
// "partitioned" (drops every byte both ways while the connections stay open, as a network
// partition or a failover in progress does).
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, connect, type Server as TcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = fileURLToPath(new URL("../../bin/tollgate.mjs", import.meta.url));

export type UpstreamBehaviour = {
  /** Streams: chunks sent `everyMs` apart, then finish + usage; 0 chunks = endless. */
  chunks?: number;
  everyMs?: number;
  /** Non-streamed answers wait this long. */
  wholeDelayMs?: number;
};

export async function startUpstream(behaviour: UpstreamBehaviour = {}): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk) => (raw += chunk));
    request.on("end", () => {
      const body = JSON.parse(raw);
      const base = { id: "chatcmpl-local", created: 1, model: body.model };
      if (!body.stream) {
        const timer = setTimeout(() => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(
            JSON.stringify({
              ...base,
              object: "chat.completion",
              choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
              usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
            }),
          );
        }, behaviour.wholeDelayMs ?? 0);
        response.on("close", () => clearTimeout(timer));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.write(chunk({ role: "assistant", content: "" }));
      let n = 0;
      const limit = behaviour.chunks ?? 0;
      const timer = setInterval(() => {
        if (limit > 0 && n >= limit) {
          clearInterval(timer);
          response.write(chunk({}, "stop"));
          response.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 } })}\n\n`);
          response.end("data: [DONE]\n\n");
          return;
        }
        response.write(chunk({ content: ` tick${n++}` }));
      }, behaviour.everyMs ?? 100);
      response.on("close", () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type SpawnedGateway = {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  log(): string;
};

export async function spawnGateway(directory: string, name: string, config: object, env: Record<string, string> = {}): Promise<SpawnedGateway> {
  const configPath = join(directory, `${name}.json`);
  await writeFile(configPath, JSON.stringify(config));
  const child = spawn("node", [BIN, "--config", configPath], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (chunk) => (log += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line:\n${log}`)), 30_000);
    child.stderr!.on("data", (chunk) => {
      log += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(log);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
  });
  return { child, url, exited, log: () => log };
}

/** A TCP proxy to `target`; partition() silently drops every byte both ways, heal() lets them through again. */
export async function startPartitionableProxy(targetUrl: string): Promise<{ url: string; partition(): void; heal(): void; close(): Promise<void> }> {
  const target = new URL(targetUrl);
  let partitioned = false;
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    client.on("data", (data) => {
      if (!partitioned) upstream.write(data);
    });
    upstream.on("data", (data) => {
      if (!partitioned) client.write(data);
    });
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    partition: () => (partitioned = true),
    heal: () => (partitioned = false),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
