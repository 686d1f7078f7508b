import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "../src/node/serve.ts";
import { postJson, temporaryLedgerPath, testConfig } from "./support/gateway.ts";
import { findFreePort } from "./support/redis-server.ts";

// A local decoder that is down. Over the Node server's own transport (undici) the 502 said
// `could not reach provider "local": connect ECONNREFUSED 10.0.0.5:8000`: a host and port inside
// the platform's network, given to whoever sent the request. Now the client learns the provider
// and the kind of failure; the address goes to the gateway's log line for that request.

let gateway: RunningGateway;
let port: number;
let otherPort: number;
const lines: string[] = [];
beforeAll(async () => {
  port = await findFreePort(); // nothing listens there
  otherPort = await findFreePort();
  const base = testConfig(`http://127.0.0.1:${port}/v1`);
  gateway = await startGateway({
    config: {
      ...base,
      providers: { ...base.providers, other: { ...base.providers.local, baseUrl: `http://127.0.0.1:${otherPort}/v1` } },
      routes: { ...base.routes, pair: { targets: [{ provider: "local", model: "tiny-local" }, { provider: "other", model: "tiny-local" }] } },
      store: { path: temporaryLedgerPath() },
    },
    port: 0,
    upstreamTransport: "undici",
    env: { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" },
    log: (line) => lines.push(line),
  });
});
afterAll(async () => {
  await gateway?.close();
});

describe("a local decoder down from the start, over the production transport", () => {
  it.each([
    ["/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }] }],
    ["/v1/messages", { model: "local", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }],
  ])("%s: the 502 names the provider and the failure, not the decoder's address", async (path, body) => {
    const response = await postJson(gateway, path, body);
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).toContain('could not reach provider \\"local\\" (connection refused)');
    expect(text).not.toContain("127.0.0.1");
    expect(text).not.toContain(String(port));
    const requestId = response.headers.get("x-tollgate-request-id")!;
    expect(lines.find((line) => line.includes(requestId))).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  // The route's final failure is told again naming its other targets: the log line keeps every
  // target's address. Was: neither address written anywhere.
  it("a route of two: the log line has both addresses, the client neither", async () => {
    const response = await postJson(gateway, "/v1/chat/completions", { model: "pair", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).not.toContain("127.0.0.1");
    const line = lines.find((entry) => entry.includes(response.headers.get("x-tollgate-request-id")!));
    expect(line).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(line).toContain(`ECONNREFUSED 127.0.0.1:${otherPort}`);
  });
});
