import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciFetch, createUndiciPost } from "./undici-fetch.ts";

// The production transport against a real node:http server: what the SDKs rely on from fetch.

let origin = "";
let handler: (request: IncomingMessage, response: ServerResponse) => void = () => {};
const server = createServer((request, response) => handler(request, response));
const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
const undiciFetch = createUndiciFetch(dispatcher);

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  server.close();
});

describe("createUndiciFetch", () => {
  it("sends method, headers and body, and returns status, headers and JSON", async () => {
    let seen: { method?: string; auth?: string; body?: string } = {};
    handler = (request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        seen = { method: request.method, auth: request.headers.authorization, body };
        response.writeHead(429, { "content-type": "application/json", "retry-after": "3", "set-cookie": ["a=1", "b=2"] });
        response.end('{"error":{"message":"slow down"}}');
      });
    };
    const response = await undiciFetch(`${origin}/v1/x`, { method: "POST", headers: new Headers({ Authorization: "Bearer k" }), body: '{"q":1}' });
    expect(seen).toEqual({ method: "POST", auth: "Bearer k", body: '{"q":1}' });
    expect(response.status).toBe(429);
    expect(response.ok).toBe(false);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(response.headers.get("set-cookie")).toBe("a=1, b=2");
    expect(await response.json()).toEqual({ error: { message: "slow down" } });
  });

  // The bytes of an answer read whole are Node Buffers, views into a pool or the socket's memory.
  // Was: arrayBuffer() gave the whole memory behind the view, other connections' bytes with it.
  it("arrayBuffer() of an answer read whole holds exactly its bytes", async () => {
    const answer = JSON.stringify({ id: "x", pad: "y".repeat(100) });
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write(answer.slice(0, 50));
      setTimeout(() => response.end(answer.slice(50)), 20);
    };
    const response = await undiciFetch(`${origin}/v1/x`, { method: "POST", body: "{}" });
    expect(new TextDecoder().decode(await response.arrayBuffer())).toBe(answer);
  });

  it("streams an event stream chunk by chunk, before the server has finished", async () => {
    let release: () => void = () => {};
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n");
      release = () => response.end("data: two\n\n");
    };
    const response = await undiciFetch(`${origin}/stream`, { method: "POST", body: "{}" });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe("data: one\n\n");
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: two\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("closes the upstream connection when the signal aborts mid-stream", async () => {
    let closed: Promise<void> = Promise.resolve();
    handler = (request, response) => {
      closed = new Promise((resolve) => response.on("close", () => resolve()));
      response.writeHead(200, { "content-type": "text/event-stream" });
      const timer = setInterval(() => response.write("data: tick\n\n"), 5);
      request.socket.on("close", () => clearInterval(timer));
    };
    const controller = new AbortController();
    const response = await undiciFetch(`${origin}/endless`, { method: "POST", body: "{}", signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await closed;
  });

  it("returns a null body for 204", async () => {
    handler = (_request, response) => {
      response.writeHead(204);
      response.end();
    };
    const response = await undiciFetch(`${origin}/empty`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });
});

describe("the official SDKs over createUndiciFetch", () => {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };

  it("OpenAI: parses a completion and raises RateLimitError with its headers", async () => {
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ apiKey: "k", baseURL: `${origin}/v1`, maxRetries: 0, fetch: undiciFetch });
    handler = json(200, { id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }, { "x-request-id": "req_9" });
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    expect(completion.choices[0]?.message.content).toBe("hi");
    expect(completion._request_id).toBe("req_9");

    handler = json(429, { error: { message: "slow", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after": "4" });
    const failure = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(failure.headers.get("retry-after")).toBe("4");
    expect(failure.error).toMatchObject({ message: "slow" });
  });

  it("Anthropic: parses a message, streams events, and raises OverloadedError", async () => {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({ apiKey: "k", baseURL: origin, maxRetries: 0, fetch: undiciFetch });
    handler = json(200, { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [{ type: "text", text: "hej" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } });
    const message = await client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 5, messages: [{ role: "user", content: "x" }] });
    expect(message.content).toEqual([{ type: "text", text: "hej" }]);

    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const event = (name: string, data: unknown) => response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      event("message_start", { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } });
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "strøm" } });
      event("content_block_stop", { type: "content_block_stop", index: 0 });
      event("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } });
      event("message_stop", { type: "message_stop" });
      response.end();
    };
    const streamed = await client.messages.stream({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }).finalMessage();
    expect(streamed.content).toEqual([{ type: "text", text: "strøm" }]);
    expect(streamed.usage.output_tokens).toBe(2);

    handler = json(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    const failure = await client.messages.create({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }).catch((error) => error);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(failure.status).toBe(529);
    expect(failure.error).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });
});

describe("createUndiciPost", () => {
  const pool = new Agent({ keepAliveTimeout: 5_000 });
  afterAll(() => pool.close());
  const post = createUndiciPost(pool);
  const send = () => post(`${origin}/v1/chat/completions`, { headers: { "content-type": "application/json" }, body: "{}", signal: new AbortController().signal });

  it("a reader that stops at the last event leaves the connection to the pool, not destroyed", async () => {
    const sockets = new Set<unknown>();
    handler = (request, response) => {
      sockets.add(request.socket);
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n");
      // The terminating chunk comes in a later write, as it does from real decoders.
      setTimeout(() => response.end(), 5);
    };
    for (let i = 0; i < 5; i++) {
      const response = await send();
      for await (const chunk of response.body) {
        expect(Buffer.from(chunk).toString()).toBe("data: one\n\n");
        break; // as an SSE reader does at [DONE]
      }
      await new Promise((resolve) => setTimeout(resolve, 30)); // the end has come by now
    }
    expect(sockets.size).toBe(1);
  });

  it("cuts off a body that keeps going after its reader stopped", async () => {
    let closedAfterMs = -1;
    let closed: Promise<void> | undefined;
    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      const started = Date.now();
      const timer = setInterval(() => response.write("data: more\n\n"), 20);
      closed = new Promise((resolve) =>
        response.on("close", () => {
          clearInterval(timer);
          closedAfterMs = Date.now() - started;
          resolve();
        }),
      );
    };
    const response = await send();
    for await (const _chunk of response.body) break;
    // Without the cut-off the server writes forever, this never resolves and the test times out.
    // No upper bound on when: a loaded machine may run the cut-off timer late.
    await closed;
    // Not at once: the rest is drained for a second first (so a body that ends soon keeps its
    // connection for the pool), and a timer never fires early.
    expect(closedAfterMs).toBeGreaterThanOrEqual(900);
  });

  it("a connection reset while the rest is drained is not an unhandled error", async () => {
    const unhandled: unknown[] = [];
    const onError = (error: unknown) => unhandled.push(error);
    process.on("uncaughtException", onError);
    try {
      handler = (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const timer = setInterval(() => response.write("data: more\n\n"), 10);
        response.on("close", () => clearInterval(timer));
        setTimeout(() => response.socket?.destroy(), 100);
      };
      const response = await send();
      for await (const _chunk of response.body) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("uncaughtException", onError);
    }
  });
});
