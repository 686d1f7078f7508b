import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { Ledger } from "../ledger/ledger.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import { buildGateway } from "./create-gateway.ts";
import { completion, sendJson, startFakeDecoder, type FakeDecoder } from "../../test/support/fake-decoder.ts";

// A streamed response-cache hit is sent as a provider's stream is (sendStream): the request is
// held open until its record is made (waitUntil on Workers), and a client that takes no bytes for
// server.streamSendTimeoutSeconds is cut and the hit recorded. Was: the replay was streamed with
// neither, so a client that read nothing of a replay too long to buffer left it waiting for ever,
// unrecorded, and a Worker could end the request before its record.

let decoder: FakeDecoder;
let gateway: ReturnType<typeof buildGateway>;
const store = new MemoryLedgerStore();
const ledger = new Ledger({ store, log: () => {} });
/** Every hold the gateway asked of its host, by request. */
const holds: { requestId: string; work: Promise<unknown> }[] = [];

/** Three tool calls of 20 kB each: a replay of more writes (16 kB each) than a stream reads ahead. */
const toolCalls = [1, 2, 3].map((n) => ({ id: `call_${n}`, type: "function", function: { name: "save", arguments: JSON.stringify({ text: "x".repeat(20_000) }) } }));

beforeAll(async () => {
  decoder = await startFakeDecoder();
  decoder.handle = (_body, response) =>
    sendJson(response, completion("cmpl-big", { content: null, tool_calls: toolCalls }, "tool_calls", { usage: { prompt_tokens: 5, completion_tokens: 30_000, total_tokens: 30_005 } }));
  const config = resolveConfig(
    {
      providers: { gpu: { type: "openai-compatible", baseUrl: decoder.baseUrl } },
      routes: { local: { targets: [{ provider: "gpu", model: "qwen3-8b" }], policies: { responseCache: { ttlSeconds: 60 } } } },
      keys: [{ id: "app", team: "search", hash: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" }],
      server: { streamSendTimeoutSeconds: 1 },
    },
    {},
  );
  gateway = buildGateway({ config, ledger, log: () => {}, holdOpen: (c, work) => void holds.push({ requestId: c.get("requestId"), work }) });
});
afterAll(() => decoder.close());

const ask = (stream: boolean) =>
  gateway.app.fetch(
    new Request("http://gateway/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer test", "content-type": "application/json" },
      body: JSON.stringify({ model: "local", temperature: 0, stream, messages: [{ role: "user", content: "save three notes" }] }),
    }),
  );

async function recordOf(requestId: string): Promise<CostRecord | undefined> {
  await ledger.flush();
  return store.records.get(requestId);
}

describe("a streamed response-cache hit whose client reads nothing", () => {
  it("holds the request open from its answer, is cut after streamSendTimeoutSeconds, and is recorded", async () => {
    const miss = await ask(false);
    expect(miss.headers.get("x-tollgate-cache")).toBe("miss");
    await miss.json();
    await Promise.all(holds.map((hold) => hold.work));

    const hit = await ask(true);
    expect(hit.headers.get("x-tollgate-cache")).toBe("hit");
    const requestId = hit.headers.get("x-tollgate-request-id")!;
    // The body is never read: the replay waits on its client after its first write.
    const held = holds.filter((hold) => hold.requestId === requestId);
    expect(held.length).toBe(1);
    await held[0]!.work;
    const record = await recordOf(requestId);
    expect({ status: record?.status, totalNano: record?.cost.totalNano }).toEqual({ status: "aborted", totalNano: 0 });
  }, 20_000);
});
