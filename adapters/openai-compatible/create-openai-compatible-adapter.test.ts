import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { getEventListeners } from "node:events";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { Agent } from "undici";
import type { TransportOptions } from "../../src/model/chat-model.ts";
import { createUndiciPost } from "../../src/node/undici-fetch.ts";
import { withDeadlines } from "../../src/routing/call-deadlines.ts";
import { createOpenAICompatibleAdapter } from "./create-openai-compatible-adapter.ts";

// The SDK-free adapter against a real HTTP server that misbehaves the ways local decoders do.

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
let server: Server;
let baseUrl: string;
let handle: Handler = () => {};
const closed: boolean[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    const index = closed.push(false) - 1;
    response.on("close", () => (closed[index] = !response.writableFinished));
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => server?.close());

const request: ChatRequest = { route: "r", stream: true, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

async function collect(parts: AsyncGenerator<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

// Both transports: `fetch` (Workers, tests with msw) and undici.request (the Node entry).
describe.each([
  { transport: "fetch", options: (): TransportOptions => ({}) },
  { transport: "undici", options: (): TransportOptions => ({ post: createUndiciPost(new Agent()) }) },
])("openai-compatible adapter over $transport", ({ options }) => {
  const adapter = () => createOpenAICompatibleAdapter({ name: "gpu", baseUrl, timeoutMs: 300, ...options() });

  it("maps an HTTP 500 with a JSON error body to a retryable upstream error", async () => {
    handle = (_request, response) => {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "CUDA out of memory", type: "server_error", code: 500 } }));
    };
    await expect(adapter().generate({ ...request, stream: false }, "m", new AbortController().signal)).rejects.toMatchObject({
      kind: "upstream",
      retryable: true,
      message: 'provider "gpu" failed (HTTP 500): CUDA out of memory',
    });
  });

  it("passes a 429's retry-after on", async () => {
    handle = (_request, response) => {
      response.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
      response.end(JSON.stringify({ error: { message: "busy" } }));
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", error: { kind: "rate_limit", retryAfterSeconds: 7 } });
  });

  it("turns an error event after HTTP 200 into an error part, after the content that came first", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ role: "assistant", content: "" }) + chunk({ content: "Hel" }));
      response.end(`data: ${JSON.stringify({ error: { message: "context full", type: "invalid_request_error" } })}\n\n`);
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.slice(0, 2)).toEqual([{ type: "start", id: "c1", model: "m", created: 1 }, { type: "text-delta", text: "Hel" }]);
    expect(parts[2]).toMatchObject({ type: "error", error: { kind: "invalid_request", message: 'provider "gpu" rejected the request: context full' } });
  });

  it("reads events split across network reads, and stops at [DONE]", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const all = chunk({ content: "a" }) + chunk({ content: "b" }, "stop") + "data: [DONE]\n\n" + chunk({ content: "ignored" });
      response.write(all.slice(0, 30));
      setTimeout(() => response.end(all.slice(30)), 20);
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.filter((part) => part.type === "text-delta")).toEqual([{ type: "text-delta", text: "a" }, { type: "text-delta", text: "b" }]);
    expect(parts.at(-1)).toEqual({ type: "finish", reason: "stop" });
  });

  it("a stream that just stops, with no finish and no [DONE], ends in an error part, not a clean end", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk({ role: "assistant", content: "" }) + chunk({ content: "half an ans" }));
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.at(-2)).toEqual({ type: "text-delta", text: "half an ans" });
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { kind: "upstream", message: expect.stringContaining("before the answer was complete") } });
  });

  it("an answer vLLM's engine aborted (finish_reason \"abort\") is a retryable failure, streamed or not", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "half" }, finish_reason: "abort" }] }));
    };
    await expect(adapter().generate({ ...request, stream: false }, "m", new AbortController().signal)).rejects.toMatchObject({ kind: "upstream", retryable: true });
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk({ content: "half" }) + chunk({}, "abort") + "data: [DONE]\n\n");
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.some((part) => part.type === "finish")).toBe(false);
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { kind: "upstream", retryable: true } });
  });

  it("a 200 with nothing in it is a retryable failure, so the route can try its next target", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end("data: [DONE]\n\n");
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", error: { kind: "upstream", retryable: true } });
  });

  it("reads a last event that lacks its closing blank line", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(chunk({ content: "ok" }, "stop").trimEnd());
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.at(-1)).toEqual({ type: "finish", reason: "stop" });
  });

  it("gives up on a decoder that sends no response headers within timeoutMs (504)", async () => {
    handle = () => {}; // never answers
    await expect(adapter().generate({ ...request, stream: false }, "m", new AbortController().signal)).rejects.toMatchObject({ kind: "timeout", status: 504 });
  });

  it("bounds only the wait for a stream's headers: a stream still producing at timeoutMs goes on", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      let n = 0;
      // 25 chunks 20 ms apart: the answer takes about 500 ms, past the 300 ms timeoutMs.
      const timer = setInterval(() => {
        if (n < 25) return void response.write(chunk({ content: `t${n++}` }));
        clearInterval(timer);
        response.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
      }, 20);
      response.on("close", () => clearInterval(timer));
    };
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts.filter((part) => part.type === "text-delta")).toHaveLength(25);
    expect(parts.at(-1)).toEqual({ type: "finish", reason: "stop" });
  });

  it("gives up on a stream whose response headers do not come within timeoutMs", async () => {
    handle = () => {}; // never answers
    const parts = await collect(adapter().stream(request, "m", new AbortController().signal));
    expect(parts).toEqual([expect.objectContaining({ type: "error", error: expect.objectContaining({ kind: "timeout", status: 504 }) })]);
  });

  it("with the router's stream deadlines, a decoder that goes silent mid-stream is cut off and its connection closed", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ role: "assistant", content: "" }));
      response.write(chunk({ content: "partial" }));
      // …and then nothing: a wedged decoder that keeps the connection open.
    };
    const guarded = withDeadlines(adapter(), { timeoutMs: 300, idleMs: 100 });
    const parts = await collect(guarded.stream(request, "m", new AbortController().signal));
    expect(parts.filter((part) => part.type === "text-delta")).toEqual([{ type: "text-delta", text: "partial" }]);
    expect(parts.at(-1)).toMatchObject({ type: "error", error: { kind: "timeout", status: 504, message: 'provider "gpu" went silent for 100 ms mid-stream; the stream was cut off' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed.at(-1)).toBe(true);
  });

  it("with the router's deadlines, an answer whose body stalls after the headers is cut off at timeoutMs, billed (the decoder had begun it) and its connection closed", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"id":"c1","object":"chat.completion",'); // …and then nothing
    };
    const guarded = withDeadlines(adapter(), { timeoutMs: 200, idleMs: 200 });
    await expect(guarded.generate({ ...request, stream: false }, "m", new AbortController().signal)).rejects.toMatchObject({
      kind: "timeout",
      status: 504,
      retryable: true,
      message: 'provider "gpu" did not finish its answer within 200 ms',
      billed: {},
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed.at(-1)).toBe(true);
  });

  it("leaves no deadline timer or client listener behind once an answer has been read", async () => {
    // Every 10-minute deadline timer a call sets must be cleared by the time its answer is read.
    const created: unknown[] = [];
    const cleared = new Set<unknown>();
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    const set = vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: () => void, ms?: number) => {
      const timer = realSetTimeout(callback, ms);
      if (ms === 600_000) created.push(timer);
      return timer;
    }) as typeof setTimeout);
    const clear = vi.spyOn(globalThis, "clearTimeout").mockImplementation(((timer: Parameters<typeof clearTimeout>[0]) => {
      cleared.add(timer);
      realClearTimeout(timer);
    }) as typeof clearTimeout);
    const client = new AbortController();
    const slow = createOpenAICompatibleAdapter({ name: "gpu", baseUrl, timeoutMs: 600_000, ...options() });
    try {
      for (let i = 0; i < 5; i++) {
        handle = (_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.end(chunk({ content: "ok" }, "stop"));
        };
        await collect(slow.stream(request, "m", client.signal));
        handle = (_request, response) => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] }));
        };
        await slow.generate({ ...request, stream: false }, "m", client.signal);
      }
    } finally {
      set.mockRestore();
      clear.mockRestore();
    }
    expect(created).toHaveLength(10);
    expect(created.filter((timer) => !cleared.has(timer))).toEqual([]);
    expect(getEventListeners(client.signal, "abort")).toEqual([]);
  });

  it("stops the decoder's stream when the caller aborts, with no error part", async () => {
    handle = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      let n = 0;
      const timer = setInterval(() => response.write(chunk({ content: `t${n++}` })), 10);
      response.on("close", () => clearInterval(timer));
    };
    const client = new AbortController();
    const parts: StreamPart[] = [];
    for await (const part of createOpenAICompatibleAdapter({ name: "gpu", baseUrl, ...options() }).stream(request, "m", client.signal)) {
      parts.push(part);
      if (parts.length === 3) client.abort();
    }
    expect(parts.some((part) => part.type === "error")).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed.at(-1)).toBe(true); // the server saw its connection closed before it finished
  });
});
