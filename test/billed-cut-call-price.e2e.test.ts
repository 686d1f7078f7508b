import { http, HttpResponse } from "msw";
import { afterEach, describe, expect, it } from "vitest";
import { ledgerRecords, postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A stream that opens (Anthropic's message_start, with its usage; OpenAI's first chunk) and ends
// before any content is billed with the usage its opening reported. Its price follows what the
// opening said, as an answered call's does: where inference ran (Anthropic bills "us" at 1.1×)
// and the tier that served it (OpenAI's priority). Was: the global, standard price (found by
// review: 3,015,000 nano-dollars recorded for a 3,316,500 invoice).

const rig = useMockedGateway({
  "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
});
afterEach(() => rig.mocks.server.resetHandlers());

function eventStream(frames: string[]): Response {
  return new HttpResponse(frames.join(""), { headers: { "content-type": "text/event-stream" } });
}

/** Claude opens its answer in the US, 1,000 tokens in, then the connection ends. */
function claudeOpensInTheUsThenEnds(): void {
  const opening = {
    type: "message_start",
    message: {
      id: "msg_cut",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-6",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1_000, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, inference_geo: "us" },
    },
  };
  rig.mocks.server.use(http.post("https://api.anthropic.com/v1/messages", () => eventStream([`event: message_start\ndata: ${JSON.stringify(opening)}\n\n`])));
}

// Claude Sonnet 4.6 at $3 / $15 per 1M, × 1.1 in the US: 1,000 × 3,300 + 1 × 16,500 nano-dollars.
const CUT_IN_THE_US = 3_316_500;

describe("a billed call cut before its first content", () => {
  it("on Claude in the US: recorded at the US price, alone on its route", async () => {
    claudeOpensInTheUsThenEnds();
    const response = await postJson(rig.gateway, "/v1/messages", { model: "claude", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    await response.text();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.usage).toMatchObject({ inputTokens: 1_000, outputTokens: 1 });
    expect([record.cost.totalNano, record.inferenceGeo]).toEqual([CUT_IN_THE_US, "us"]);
  });

  it("on Claude in the US, before the route falls back: the cut call's own record at the US price", async () => {
    claudeOpensInTheUsThenEnds();
    rig.mocks.openai.enqueue({ kind: "text", text: "rescued" });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(await response.text()).toContain("rescued");
    const requestId = response.headers.get("x-tollgate-request-id")!;
    await waitForRecord(rig.gateway, requestId);
    const cut = (await ledgerRecords(rig.gateway)).find((record) => record.requestId === `${requestId}.1`);
    expect([cut?.cost.totalNano, cut?.inferenceGeo]).toEqual([CUT_IN_THE_US, "us"]);
  });

  it("before a fallback that is refused: the request's own record says nothing of the cut call's model or region", async () => {
    // Was: the last target's record (refused, $0) kept the cut Claude call's responseModel and
    // inferenceGeo, as if Claude had answered it in the US.
    claudeOpensInTheUsThenEnds();
    rig.mocks.openai.enqueue({ kind: "http-error", status: 503 });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    await response.text();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ provider: record.provider, status: record.status, responseModel: record.responseModel, inferenceGeo: record.inferenceGeo }).toEqual({
      provider: "openai",
      status: "error",
      responseModel: undefined,
      inferenceGeo: undefined,
    });
  });

  it("on OpenAI at the priority tier: recorded at the priority price", async () => {
    const chunk = { id: "chatcmpl-cut", object: "chat.completion.chunk", created: 1, model: "gpt-4o-2024-08-06", service_tier: "priority", system_fingerprint: "fp_0123456789" };
    rig.mocks.server.use(
      http.post("https://api.openai.com/v1/chat/completions", () =>
        eventStream([
          `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }], usage: null })}\n\n`,
          `data: ${JSON.stringify({ ...chunk, choices: [], usage: { prompt_tokens: 1_000, completion_tokens: 0, total_tokens: 1_000 } })}\n\n`,
        ]),
      ),
    );
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
    await response.text();
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    // gpt-4o at priority, $4.25 per 1M input: 1,000 × 4,250 nano-dollars.
    expect([record.cost.totalNano, record.serviceTier]).toEqual([4_250_000, "priority"]);
  });
});
