import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";
import { startFakeDecoder, type FakeDecoder } from "./support/fake-decoder.ts";
import { contentBlockStartEvent, contentBlockStopEvent, messageDeltaEvent, messageStartEvent, textDeltaEvent } from "./support/msw/anthropic-wire-format.ts";
import { ledgerRecords, postJson, startTestGateway, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { everyAdapterAt } from "./support/decoder-rig.ts";

// A stream whose connection is lost after the provider began to answer (a TCP reset, a proxy
// dropping the socket) is a call the provider took and bills: it is billed here exactly as the
// same stream closed cleanly at the same point. Was: a reset made the SDK throw ("terminated"),
// which read as "could not reach the provider", so the call cost $0 and the client was told the
// provider was unreachable. A node:http stand-in serves both providers, so the reset is a real one.
//
// Prices (bundled): claude-sonnet-4-6 $3 / $15 per 1M = 3,000 / 15,000 nano-dollars a token.

let mocks: MockProviders;
let fake: FakeDecoder;
let gateway: TestGateway;

// Claude's opening: 10 input tokens and its placeholder of 1 output token.
const MESSAGE_START = messageStartEvent({ id: "msg_01", model: "claude-sonnet-4-6" }, { input_tokens: 10, output_tokens: 1 });
const ROLE_CHUNK = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "tiny-local", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] };

type Cut = "reset" | "close";

/** Opens the stream as the provider would (its first event), then loses the connection one way or the other. */
function openThenCut(cut: Cut) {
  return (body: Record<string, unknown>, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    if (body.model === "claude-sonnet-4-6") response.write(`event: message_start\ndata: ${JSON.stringify(MESSAGE_START)}\n\n`);
    else response.write(`data: ${JSON.stringify(ROLE_CHUNK)}\n\n`);
    setTimeout(() => (cut === "reset" ? response.socket!.destroy() : response.end()), 30);
  };
}

beforeAll(async () => {
  mocks = startMockProviders();
  fake = await startFakeDecoder();
  gateway = await startTestGateway(
    everyAdapterAt(fake.baseUrl, {
      "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
    }),
  );
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  mocks?.close();
});

async function streamAlone(path: string, body: Record<string, unknown>) {
  const response = await postJson(gateway, path, { ...body, stream: true });
  const text = await response.text();
  return { status: response.status, text, record: await waitForRecord(gateway, response.headers.get("x-tollgate-request-id")!) };
}

describe("a stream whose connection is lost after the provider began to answer", () => {
  it("Claude, alone on its route: billed the input message_start reported, as if the stream had closed", async () => {
    for (const cut of ["reset", "close"] as const) {
      fake.handle = openThenCut(cut);
      // Nothing of the answer had been sent: the client gets the failure as an HTTP error.
      const { status, text, record } = await streamAlone("/v1/messages", { model: "claude", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
      expect(status).toBe(502);
      expect(JSON.parse(text).error.message).toMatch(/^provider "anthropic" (lost the connection|stopped) before the answer was complete/);
      expect(record).toMatchObject({ status: "error", provider: "anthropic" });
      expect(record.cost.totalNano).toBe(45_000); // 10 × 3,000 + 1 × 15,000
    }
  });

  it("Claude, before a fallback: a billed record of its own, and the next target answers", async () => {
    fake.handle = openThenCut("reset");
    mocks.openai.enqueue({ kind: "text", text: "rescued", usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(await response.text()).toContain("rescued");
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(gateway, id)).toMatchObject({ status: "ok", provider: "openai" });
    const earlier = (await ledgerRecords(gateway)).filter((record) => record.attemptOf === id);
    expect(earlier).toHaveLength(1);
    expect(earlier[0]).toMatchObject({ status: "error", provider: "anthropic" });
    expect(earlier[0]!.cost.totalNano).toBe(45_000);
  });

  it.each([
    ["a local decoder", "local", "local"],
    ["OpenAI", "gpt-here", "openai-here"],
  ])("%s, after its role chunk: billed tollgate's count of the prompt, the same for a reset as for a close", async (_name, route, provider) => {
    const costs: number[] = [];
    for (const cut of ["reset", "close"] as const) {
      fake.handle = openThenCut(cut);
      const { record } = await streamAlone("/v1/chat/completions", { model: route, messages: [{ role: "user", content: "Say hello to everyone in the room" }] });
      expect(record).toMatchObject({ status: "error", provider, estimated: true });
      costs.push(record.cost.totalNano);
    }
    expect(costs[0]).toBeGreaterThan(0);
    expect(costs[0]).toBe(costs[1]);
  });

  it("a connection lost before any answer is not billed: the provider never took the call", async () => {
    fake.handle = (_body, response) => response.socket!.destroy();
    const { record } = await streamAlone("/v1/messages", { model: "claude", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(record).toMatchObject({ status: "error", provider: "anthropic" });
    expect(record.cost.totalNano).toBe(0);
  });
});

/** The whole answer and why it stopped (Claude's message_delta; OpenAI's finish_reason chunk), then the connection goes before the stream's last event. */
function answerThenCut(cut: Cut) {
  const named = (name: string, value: unknown) => `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
  const chunk = (choice: unknown) => `data: ${JSON.stringify({ ...ROLE_CHUNK, model: "gpt-4o", choices: [choice] })}\n\n`;
  return (body: Record<string, unknown>, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    if (body.model === "claude-sonnet-4-6") {
      response.write(named("message_start", MESSAGE_START));
      response.write(named("content_block_start", contentBlockStartEvent(0, { type: "text", text: "" } as never)));
      response.write(named("content_block_delta", textDeltaEvent(0, "hello there")));
      response.write(named("content_block_stop", contentBlockStopEvent(0)));
      response.write(named("message_delta", messageDeltaEvent({ reason: "end_turn", sequence: null }, { input_tokens: 10, output_tokens: 5 })));
    } else {
      response.write(chunk({ index: 0, delta: { role: "assistant", content: "hello there" }, finish_reason: null }));
      response.write(chunk({ index: 0, delta: {}, finish_reason: "stop" }));
    }
    setTimeout(() => (cut === "reset" ? response.socket!.destroy() : response.end()), 30);
  };
}

describe("a stream whose connection is lost after the provider said why the answer stopped", () => {
  // Before OpenAI's usage chunk, or Claude's message_stop. Was: the whole answer, then an error
  // (the SDK threw mid-iteration) and an error record, where the same stream closed there is whole.
  it.each([
    ["OpenAI", "/v1/chat/completions", { model: "gpt-here", messages: [{ role: "user", content: "Say hello to everyone in the room" }] }],
    ["Claude", "/v1/messages", { model: "claude", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }],
  ])("%s: a reset reads as the same stream closed there, a whole answer", async (_name, path, body) => {
    const outcomes = [];
    for (const cut of ["reset", "close"] as const) {
      fake.handle = answerThenCut(cut);
      const { status, text, record } = await streamAlone(path, body);
      const events = text.split("\n").filter((line) => line.startsWith("data:") || line.startsWith("event:"));
      outcomes.push({ status, failed: events.some((line) => line === "event: error" || line.includes('"error"')), recorded: record.status, cost: record.cost.totalNano });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0]).toMatchObject({ status: 200, failed: false, recorded: "ok" });
  });
});
