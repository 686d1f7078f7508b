import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciFetch } from "./undici-fetch.ts";

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
