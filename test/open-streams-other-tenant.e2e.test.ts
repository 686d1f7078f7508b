import { createServer, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { sha256 } from "./support/gateway.ts";

// One tenant opens many streams that the upstream answers slowly; another tenant on the same
// provider is still answered. Was: the undici Agent of serve.ts capped connections per provider at
// 256, shared by every tenant, so a key holding 256 streams queued everyone else's requests until
// one ended (or their 600 s timeout).

const HOG = "tg_hog_key_0123456789abcdef";
const OTHER = "tg_other_key_0123456789abcdef";

let upstream: Server;
let gateway: RunningGateway;
const held: ServerResponse[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text);
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "tick" }, finish_reason: null }] })}\n\n`);
        held.push(res); // a long answer: nothing more for now
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const port = (upstream.address() as { port: number }).port;
  gateway = await startGateway({
    config: {
      providers: { local: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${port}/v1`, pricing: { default: { inputPerMillion: 1, outputPerMillion: 1 } } } },
      routes: { local: { targets: [{ provider: "local", model: "m" }] } },
      keys: [
        { id: "hog", team: "a", hash: sha256(HOG) },
        { id: "other", team: "b", hash: sha256(OTHER) },
      ],
      store: { path: join(tmpdir(), `tollgate-test-${randomUUID()}`, "ledger.jsonl") },
    },
    port: 0,
    env: {},
    log: () => {},
    upstreamTransport: "undici",
  });
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await gateway?.close({ drainMs: 100 });
  upstream?.closeAllConnections();
  upstream?.close();
});

const chat = (key: string, stream: boolean, signal?: AbortSignal) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "local", stream, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });

describe("one key's open streams and another tenant", () => {
  it("another tenant is answered while one key holds 300 streams open", async () => {
    const hogs = new AbortController();
    const opened = await Promise.all(Array.from({ length: 300 }, () => chat(HOG, true, hogs.signal)));
    expect(opened.every((r) => r.status === 200)).toBe(true);
    const started = performance.now();
    // A bound on waiting, not a speed check: a queued request waits until a stream ends (never, here).
    const answer = await Promise.race([chat(OTHER, false), new Promise<"blocked">((resolve) => setTimeout(() => resolve("blocked"), 10_000))]);
    const waited = performance.now() - started;
    hogs.abort();
    expect(answer, `other tenant waited ${Math.round(waited)} ms`).not.toBe("blocked");
    expect((answer as Response).status).toBe(200);
  });
});
