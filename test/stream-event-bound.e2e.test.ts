import { describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { MAX_EVENT_BYTES } from "../adapters/shared/event-bound.ts";
import { contentBlockStartEvent, contentBlockStopEvent, messageDeltaEvent, messageStartEvent, sseEvent, textDeltaEvent } from "./support/msw/anthropic-wire-format.ts";
import { ledgerRecords, postJson, readSseEvents, waitForRecord } from "./support/gateway.ts";
import { useStandIn } from "./support/decoder-rig.ts";
import { cutOffEarly, endlessBody, type EndlessBody } from "./support/endless-body.ts";

// An upstream that never ends a stream event (bytes without a line end, forever) grew the
// gateway's memory without bound: every SSE parser in the path (eventsource-parser for a local
// decoder, the official SDKs' decoders for OpenAI and Anthropic) keeps the unfinished event. Each
// adapter now fails the call once one event passes MAX_EVENT_BYTES (16 MiB), cuts the upstream off,
// and bills the call as a stream cut at that point. A node:http stand-in serves all three
// adapters, over both transports (the Node entry's undici one, and fetch).

/** What the stand-in writes at most, so that a gateway without the bound still ends the test. */
const CAP_BYTES = MAX_EVENT_BYTES * 3;

const MESSAGE_START = messageStartEvent({ id: "msg_01", model: "claude-sonnet-4-6" }, { input_tokens: 10, output_tokens: 1 });
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The answer's opening, up to its first words: what the client gets before the cut. */
function opening(model: string): string {
  if (model !== "claude-sonnet-4-6") return chunk(model, { role: "assistant", content: "" }) + chunk(model, { content: "hello" });
  return sseEvent("message_start", MESSAGE_START) + sseEvent("content_block_start", contentBlockStartEvent(0, { type: "text", text: "" } as never)) + sseEvent("content_block_delta", textDeltaEvent(0, "hello"));
}

/** A whole answer, for the target a route falls back to. */
function wholeAnswer(model: string): string {
  if (model !== "claude-sonnet-4-6") return chunk(model, { role: "assistant", content: "rescued" }) + chunk(model, {}, "stop") + "data: [DONE]\n\n";
  return (
    sseEvent("message_start", MESSAGE_START) +
    sseEvent("content_block_start", contentBlockStartEvent(0, { type: "text", text: "" } as never)) +
    sseEvent("content_block_delta", textDeltaEvent(0, "rescued")) +
    sseEvent("content_block_stop", contentBlockStopEvent(0)) +
    sseEvent("message_delta", messageDeltaEvent({ reason: "end_turn", sequence: null }, { input_tokens: 10, output_tokens: 2 })) +
    sseEvent("message_stop", { type: "message_stop" })
  );
}

/** The last endless event: how much of it was written, and whether the gateway hung up before CAP_BYTES. */
let endless: EndlessBody;

/** Writes `prefix`, then an event that never ends, 1 MiB at a time as fast as the gateway reads, until it hangs up (or CAP_BYTES). */
function endlessEvent(response: ServerResponse, prefix: string): void {
  endless = endlessBody(response, 200, "text/event-stream", `${prefix}data: {"choices":"`, CAP_BYTES);
}

const standIn = useStandIn();

describe.each(["undici", "fetch"] as const)("an upstream whose stream event never ends (%s transport)", (transport) => {
  const rig = standIn.gatewayOver(transport);

  async function streamAlone(path: string, body: Record<string, unknown>) {
    const response = await postJson(rig.gateway, path, { ...body, stream: true });
    const events = await readSseEvents(response);
    return { status: response.status, events, record: await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!) };
  }

  it.each([
    ["Anthropic", "/v1/messages", "claude", "anthropic"],
    ["OpenAI", "/v1/chat/completions", "gpt-here", "openai-here"],
    ["a local decoder", "/v1/chat/completions", "local", "local"],
  ])("%s, after the answer began: an error event naming the provider and the bound, the upstream cut off, billed as the same stream closed there", async (_name, path, route, provider) => {
    const body = { model: route, max_tokens: 50, messages: [{ role: "user", content: "Say hello to everyone in the room" }] };
    // The cut call's record asks a local decoder for its count of the prompt (/apply-template):
    // this one has no such endpoint, and tollgate counts for itself, as for the closed stream below.
    const onlyChat = (answer: (request: Record<string, unknown>, response: ServerResponse) => void) => (request: Record<string, unknown>, response: ServerResponse) =>
      /\/chat\/completions$|\/messages$/.test(standIn.fake.paths.at(-1)!) ? answer(request, response) : void response.writeHead(404).end();
    standIn.fake.handle = onlyChat((request, response) => endlessEvent(response, opening(request.model as string)));
    const cut = await streamAlone(path, body);
    await cutOffEarly(endless);

    expect(cut.status).toBe(200);
    expect(cut.events.map((event) => event.data).join("")).toContain("hello");
    const failure = cut.events.at(-1)!;
    expect(JSON.parse(failure.data).error.message).toBe(`provider "${provider}" sent a stream event longer than 16 MiB without ending it; tollgate stops reading a stream there`);
    expect(cut.record).toMatchObject({ status: "error", provider });

    // The same opening, then the connection closed: the usual cut stream, and the same bill.
    standIn.fake.handle = onlyChat((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(opening(request.model as string));
    });
    const closed = await streamAlone(path, body);
    expect(closed.record).toMatchObject({ status: "error", provider });
    expect(cut.record.cost.totalNano).toBeGreaterThan(0);
    expect(cut.record.cost.totalNano).toBe(closed.record.cost.totalNano);
  });

  it("the first event never ends: not billed, and the route's next target answers", async () => {
    standIn.fake.handle = (request, response) => {
      if (request.model === "tiny-local") return endlessEvent(response, "");
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(wholeAnswer(request.model as string));
    };
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local-then-claude", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(await response.text()).toContain("rescued");
    await cutOffEarly(endless);
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(rig.gateway, id)).toMatchObject({ status: "ok", provider: "anthropic" });
    expect(standIn.fake.requests.slice(-2).map((request) => request.model)).toEqual(["tiny-local", "claude-sonnet-4-6"]);
    // A billed earlier call has a record of its own (attemptOf): this one has none.
    expect((await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id)).toEqual([]);
  });
});
