import { describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from "../adapters/shared/body-bound.ts";
import { completion } from "./support/fake-decoder.ts";
import { buildMessage } from "./support/msw/anthropic-wire-format.ts";
import { ledgerRecords, postJson, waitForRecord } from "./support/gateway.ts";
import { useStandIn } from "./support/decoder-rig.ts";
import { ANSWER_OPENING, cutOffEarly, endlessBody, type EndlessBody } from "./support/endless-body.ts";

// An upstream answering with a body that never ends (or a multi-GB one) grew the gateway's memory
// without bound: an answer not streamed, a refusal's body, and a stream answered as JSON were each
// read whole. An answer now fails past MAX_ANSWER_BYTES (128 MiB) with a 502 the route may fall
// back from, billed as an answer cut after its headers; a refusal's body is read to
// MAX_ERROR_BODY_BYTES (1 MiB), its start kept for the message. Either way the upstream's
// connection is closed there. A node:http stand-in serves the three adapters, over both
// transports (the Node entry's undici one, and fetch, which Workers use).

/** What the stand-in writes at most, so that a gateway without the bounds still ends the test. */
const ANSWER_CAP = MAX_ANSWER_BYTES * 2;
const REFUSAL_CAP = MAX_ERROR_BODY_BYTES * 32;

/** The last endless body the stand-in wrote. */
let endless: EndlessBody = { written: 0, cutOff: false, cap: 0 };

const endlessAnswer = (response: ServerResponse) => (endless = endlessBody(response, 200, "application/json", ANSWER_OPENING, ANSWER_CAP));
const endlessRefusal = (response: ServerResponse) => (endless = endlessBody(response, 500, "text/html", "<html><body>upstream exploded ", REFUSAL_CAP));
const cutOff = () => cutOffEarly(endless);

/** The 200 and the first bytes of the answer's JSON, then a reset: an answer cut after its headers. */
function headersThenReset(response: ServerResponse) {
  response.writeHead(200, { "content-type": "application/json" });
  response.write('{"id":"answer-1","choices":[{"index":0,"message":{"role":"assistant","content":"Hel');
  setTimeout(() => response.socket!.destroy(), 30);
}

const rescued = (model: string) =>
  model === "claude-sonnet-4-6"
    ? JSON.stringify(buildMessage({ id: "msg_01", model }, [{ type: "text", text: "rescued" } as never], { reason: "end_turn", sequence: null }, { input_tokens: 10, output_tokens: 2 }))
    : completion("answer-2", { content: "rescued" }, "stop", { usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });

const standIn = useStandIn();

describe.each(["undici", "fetch"] as const)("an upstream whose body never ends (%s transport)", (transport) => {
  const rig = standIn.gatewayOver(transport);

  async function ask(path: string, body: Record<string, unknown>) {
    const response = await postJson(rig.gateway, path, body);
    const answer = (await response.json()) as { error?: { message: string } };
    return { status: response.status, answer, record: await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!) };
  }

  const ADAPTERS = [
    ["Anthropic", "/v1/messages", "claude", "anthropic"],
    ["OpenAI", "/v1/chat/completions", "gpt-here", "openai-here"],
    ["a local decoder", "/v1/chat/completions", "local", "local"],
  ] as const;
  const question = (route: string) => ({ model: route, max_tokens: 50, messages: [{ role: "user", content: "Say hello to everyone in the room" }] });

  it.each(ADAPTERS)("%s, an answer not streamed: a 502 naming the provider and the bound, the upstream cut off, billed as an answer cut after its headers", async (_name, path, route, provider) => {
    standIn.fake.handle = (_request, response) => void endlessAnswer(response);
    const cut = await ask(path, question(route));
    await cutOff();
    expect(cut.status).toBe(502);
    expect(cut.answer.error!.message).toBe(`provider "${provider}" sent an answer longer than 128 MiB; tollgate stops reading an answer there`);
    expect(cut.record).toMatchObject({ status: "error", provider, estimated: true });

    // The same call, its connection lost after the headers: the same bill.
    standIn.fake.handle = (_request, response) => headersThenReset(response);
    const lost = await ask(path, question(route));
    expect(lost.answer.error!.message).toContain("lost the connection before the answer was complete");
    expect(cut.record.cost.totalNano).toBeGreaterThan(0);
    expect(cut.record.cost.totalNano).toBe(lost.record.cost.totalNano);
  });

  it.each(ADAPTERS)("%s, a refusal whose body never ends: its start in the error, the upstream cut off", async (_name, path, route, provider) => {
    standIn.fake.handle = (_request, response) => void endlessRefusal(response);
    const refused = await ask(path, question(route));
    await cutOff();
    expect(refused.status).toBe(502);
    expect(refused.answer.error!.message).toContain("upstream exploded");
    // A refusal, not billed.
    expect(refused.record).toMatchObject({ status: "error", provider });
    expect(refused.record.cost.totalNano).toBe(0);
  });

  it("a stream answered with a JSON body that never ends: a 502, the upstream cut off", async () => {
    standIn.fake.handle = (_request, response) => void endlessAnswer(response);
    const cut = await ask("/v1/chat/completions", { ...question("gpt-here"), stream: true });
    await cutOff();
    expect(cut.status).toBe(502);
    expect(cut.answer.error!.message).toBe('provider "openai-here" sent an answer longer than 128 MiB; tollgate stops reading an answer there');
    expect(cut.record).toMatchObject({ status: "error", provider: "openai-here", estimated: true });
  });

  it("the route's next target answers, and the cut call has a billed record of its own", async () => {
    standIn.fake.handle = (request, response) => {
      if (request.model === "tiny-local") return void endlessAnswer(response);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(rescued(request.model as string));
    };
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "local-then-claude", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain("rescued");
    await cutOff();
    const id = response.headers.get("x-tollgate-request-id")!;
    expect(await waitForRecord(rig.gateway, id)).toMatchObject({ status: "ok", provider: "anthropic" });
    expect(standIn.fake.requests.slice(-2).map((request) => request.model)).toEqual(["tiny-local", "claude-sonnet-4-6"]);
    const earlier = (await ledgerRecords(rig.gateway)).filter((record) => record.attemptOf === id);
    expect(earlier).toHaveLength(1);
    expect(earlier[0]).toMatchObject({ status: "error", provider: "local", estimated: true });
    expect(earlier[0]!.cost.totalNano).toBeGreaterThan(0);
  });
});
