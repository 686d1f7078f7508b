// Fake OpenAI-compatible upstream: answers POST /v1/chat/completions at once, with no delays.
// Non-streaming: a fixed chat.completion with usage. Streaming: OpenAI's exact SSE framing.
// Usage: tsx bench/fake-upstream.ts [port]
import http from "node:http";
import { announce, CHAT_PATH, portFromArgs } from "./lib/shared.ts";

const CREATED = 1_700_000_000;
const WORDS = ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"];
const TEXT = WORDS.join("");
const usage = { prompt_tokens: 9, completion_tokens: WORDS.length, total_tokens: 9 + WORDS.length };

function completion(model: string): string {
  return JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: TEXT, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage,
    system_fingerprint: "fp_bench",
  });
}

function chunk(model: string, choices: unknown[], withUsage: boolean, usageValue: unknown = null): string {
  const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: CREATED, model, system_fingerprint: "fp_bench", choices };
  return `data: ${JSON.stringify(withUsage ? { ...base, usage: usageValue } : base)}\n\n`;
}

/** The SSE events of one stream, each already framed as `data: ...\n\n`. */
function streamEvents(model: string, includeUsage: boolean): string[] {
  const delta = (d: object, finish: string | null = null) => [{ index: 0, delta: d, logprobs: null, finish_reason: finish }];
  const events = [chunk(model, delta({ role: "assistant", content: "", refusal: null }), includeUsage)];
  for (const w of WORDS) events.push(chunk(model, delta({ content: w }), includeUsage));
  events.push(chunk(model, delta({}, "stop"), includeUsage));
  if (includeUsage) events.push(chunk(model, [], true, usage));
  events.push("data: [DONE]\n\n");
  return events;
}

// Responses depend only on (model, stream, include_usage): build each once.
const cache = new Map<string, string | string[]>();
function cached(key: string, make: () => string | string[]) {
  let v = cache.get(key);
  if (v === undefined) cache.set(key, (v = make()));
  return v;
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || req.url !== CHAT_PATH) {
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
    return;
  }
  const parts: Buffer[] = [];
  req.on("data", (b: Buffer) => parts.push(b));
  req.on("end", () => {
    let body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
    try {
      body = JSON.parse(Buffer.concat(parts).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad json"}}');
      return;
    }
    const model = typeof body.model === "string" ? body.model : "bench-model";
    if (body.stream) {
      const includeUsage = body.stream_options?.include_usage === true;
      const events = cached(`s:${model}:${includeUsage}`, () => streamEvents(model, includeUsage)) as string[];
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
      for (const e of events) res.write(e);
      res.end();
    } else {
      const json = cached(`j:${model}`, () => completion(model)) as string;
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) }).end(json);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(portFromArgs(), "127.0.0.1", () => {
  announce({ type: "ready", port: (server.address() as { port: number }).port });
});
