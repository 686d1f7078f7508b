import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UPSTREAM_AGENT_OPTIONS } from "./serve.ts";

// undici's own headers and body timeouts (300 s by default) cut a local decoder's long answer at
// 5 minutes, which the gateway then reported as its 600 s `timeoutMs`. The provider's own
// deadlines bound each call; the pool has none of its own. Here undici's clock is faked: a
// server that has not answered after 301 s still has its request waiting.

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer(() => {}); // never answers
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function stateAfter301Seconds(agent: Agent): Promise<string> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  try {
    const outcome = request(url, { dispatcher: agent }).then(
      () => "answered",
      (error: Error) => error.name,
    );
    await new Promise((resolve) => setImmediate(resolve)); // connected, the request sent
    await vi.advanceTimersByTimeAsync(301_000);
    return await Promise.race([outcome, new Promise<string>((resolve) => setImmediate(() => resolve("still waiting")))]);
  } finally {
    vi.useRealTimers();
    await agent.destroy();
  }
}

describe("the upstream connection pool", () => {
  it("has no headers timeout of its own (undici's default would have cut at 300 s)", async () => {
    expect(await stateAfter301Seconds(new Agent({ keepAliveTimeout: 30_000 }))).toBe("HeadersTimeoutError"); // the default, to show the clock works
    expect(await stateAfter301Seconds(new Agent(UPSTREAM_AGENT_OPTIONS))).toBe("still waiting");
  });
});
