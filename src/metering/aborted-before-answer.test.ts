import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { createOpenAIAdapter } from "../../adapters/openai/create-openai-adapter.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { toGatewayError } from "../../src/errors/gateway-error.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { MemoryLedgerStore } from "../../src/ledger/memory-ledger-store.ts";
import { Metering } from "../../src/metering/metering.ts";
import { createTiktokenCounter } from "../../src/metering/tiktoken-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { generateOnRoute, streamOnRoute } from "../../src/routing/route-chat.ts";
import type { ProviderSlot } from "../../src/routing/create-chat-models.ts";
import { createGatewayTelemetry } from "../../src/telemetry/gateway-telemetry.ts";

// request-meter.ts settleUsage: "An aborted call counts as having reached the provider (it read
// the prompt), unless the last call had already failed: a client leaving after a 503 costs
// nothing." But route-chat's tryTargets reports the abort itself through attemptFailed() before
// it rethrows, so lastAttemptFailed is always true for a client that leaves before the answer:
// the prompt is never estimated and the record says $0.

const counter = createTiktokenCounter();
const config = resolveConfig(
  { providers: { openai: { type: "openai", apiKey: { env: "K" } } }, routes: { r: { targets: [{ provider: "openai", model: "gpt-4o" }] } } },
  { K: "sk-test" },
);

/** An upstream that has the prompt and is still working when the client leaves. */
const hangingFetch: typeof fetch = (_url, init) =>
  new Promise((_resolve, reject) => {
    init!.signal!.addEventListener("abort", () => reject(new DOMException("This operation was aborted", "AbortError")), { once: true });
  });

const SAY_HI: ChatRequest["messages"] = [{ role: "user", content: [{ type: "text", text: "Say hi" }] }];

function setup(stream: boolean, messages = SAY_HI) {
  const store = new MemoryLedgerStore();
  const ledger = new Ledger({ store, log: () => {} });
  const metering = new Metering({ config, ledger, counter, telemetry: createGatewayTelemetry({ enabled: false }) });
  const request: ChatRequest = { route: "r", stream, streamUsage: false, messages };
  const call = metering.start(
    { requestId: `req_abort_${stream}`, caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: performance.now() },
    trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
  );
  const model = createOpenAIAdapter({ name: "openai", apiKey: "sk-test", baseUrl: "http://openai.invalid/v1", fetch: hangingFetch });
  const slots = new Map<string, ProviderSlot>([["openai", { model }]]);
  return { call, request, slots };
}

describe("a client that leaves before the answer", () => {
  it.each([
    ["non-streamed", false, generateOnRoute],
    ["streamed, before the first chunk (a long prefill)", true, streamOnRoute],
  ] as const)("%s: the prompt the provider read is estimated, not recorded as $0", async (_what, stream, route) => {
    const { call, request, slots } = setup(stream);
    const client = new AbortController();
    const pending = route(request, config.routes.r!, slots, client.signal, call);
    setTimeout(() => client.abort(), 20);
    const failure = await (pending as Promise<unknown>).then(() => undefined, (error: unknown) => toGatewayError(error));
    // What handleChat's catch does:
    await call.fail(failure!, client.signal.aborted);
    const record = await call.settle({ status: "aborted", httpStatus: 499 });
    // 3 (message) + 2 ("Say hi") + 3 (reply primer) = 8 tokens × 2500 nano (gpt-4o) = 20,000 nano.
    expect({ status: record.status, inputTokens: record.usage.inputTokens, totalNano: record.cost.totalNano, estimated: record.estimated }).toEqual({
      status: "aborted",
      inputTokens: 8,
      totalNano: 20_000,
      estimated: true,
    });
  });
});

// The prompt of a cut call is estimated as count_tokens estimates it (countRequestTokens): each
// image at 765 tokens, 85 at low detail. Was: images left out, so a cut call whose prompt was a
// screenshot billed its few words of text, where count_tokens said 765 tokens more per image.
describe("a client that leaves before the answer to a prompt with images", () => {
  it("bills each image as count_tokens estimates it: 765 tokens, 85 at low detail", async () => {
    const { call, request, slots } = setup(false, [
      {
        role: "user",
        content: [
          { type: "text", text: "Say hi" },
          { type: "image", source: "url", url: "https://example.com/a.png" },
          { type: "image", source: "url", url: "https://example.com/b.png", detail: "low" },
        ],
      },
    ]);
    const client = new AbortController();
    const pending = generateOnRoute(request, config.routes.r!, slots, client.signal, call);
    setTimeout(() => client.abort(), 20);
    const failure = await pending.then(() => undefined, (error: unknown) => toGatewayError(error));
    await call.fail(failure!, client.signal.aborted);
    const record = await call.settle({ status: "aborted", httpStatus: 499 });
    // 8 tokens of text and framing (above) + 765 + 85 = 858 tokens × 2500 nano (gpt-4o) = 2,145,000 nano.
    expect({ inputTokens: record.usage.inputTokens, totalNano: record.cost.totalNano, estimated: record.estimated }).toEqual({
      inputTokens: 858,
      totalNano: 2_145_000,
      estimated: true,
    });
  });
});
