import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import type { CostRecord } from "../src/metering/cost-record.ts";
import { APP_KEY, ledgerRecords, postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";
import { messageStartEvent, sseEvent } from "./support/msw/anthropic-wire-format.ts";

// Anthropic's message_start states the input it read, cache reads included, before the first
// token. A stream that ends there (the client pressed stop while a long cached prompt was read,
// or the connection was lost) is billed with that report: docs/metering.md, "The bill is the
// usage the provider reported … else the prompt as counted". It was billed from tollgate's own
// count of the prompt, every cached token at the full input price, and flagged estimated.
//
// claude-sonnet-4-6 (bundled, REFERENCE.md "Prices"): input $3, cache read $0.30, output $15 per
// 1M = 3,000 / 300 / 15,000 nano per token. message_start's placeholder output of 1 is kept, as
// test/billed-failed-calls.e2e.test.ts keeps it:
//   10 × 3,000 + 50,000 × 300 + 1 × 15,000 = 30,000 + 15,000,000 + 15,000 = 15,045,000 nano.

const rig = useMockedGateway({ sonnet: { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }] } });
const REPORTED = { inputTokens: 10, cacheReadTokens: 50_000, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, outputTokens: 1, reasoningTokens: 0 };

/** Anthropic sends message_start, then either holds the stream open (until the client leaves) or closes it. */
function messageStartThen(then: "hold" | "close") {
  rig.mocks.server.use(
    http.post(
      "https://api.anthropic.com/v1/messages",
      ({ request }) => {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            const start = messageStartEvent({ id: "msg_prefill", model: "claude-sonnet-4-6" }, { input_tokens: 10, cache_read_input_tokens: 50_000, output_tokens: 1 });
            controller.enqueue(new TextEncoder().encode(sseEvent("message_start", start)));
            if (then === "close") return controller.close();
            request.signal.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")));
          },
        });
        return new HttpResponse(body, { status: 200, headers: { "content-type": "text/event-stream", "request-id": "req_prefill" } });
      },
      { once: true },
    ),
  );
}

const ask = { model: "sonnet", max_tokens: 100, stream: true, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] };

describe("a stream that ends after Anthropic's message_start, before the first token", () => {
  it("the client left: billed with the usage message_start reported, cache reads at the cache price", async () => {
    messageStartThen("hold");
    const client = new AbortController();
    const pending = fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(ask),
      signal: client.signal,
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 400));
    client.abort();
    await pending;
    let record: CostRecord | undefined;
    for (let i = 0; i < 100 && !record; i++) {
      await rig.gateway.ledger.flush();
      record = (await ledgerRecords(rig.gateway)).find((each) => each.route === "sonnet" && each.status === "aborted");
      if (!record) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect({ usage: record?.usage, estimated: record?.estimated, totalNano: record?.cost.totalNano }).toEqual({ usage: REPORTED, estimated: false, totalNano: 15_045_000 });
  });

  it("the provider closed the stream: the failed call is billed with what message_start reported", async () => {
    messageStartThen("close");
    const response = await postJson(rig.gateway, "/v1/messages", ask);
    expect(response.status).toBe(502);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect({ status: record.status, usage: record.usage, estimated: record.estimated, totalNano: record.cost.totalNano }).toEqual({
      status: "error",
      usage: REPORTED,
      estimated: false,
      totalNano: 15_045_000,
    });
  });
});
