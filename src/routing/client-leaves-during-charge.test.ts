import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { unfinishedAnswer } from "../../adapters/shared/finish-check.ts";
import { resolveConfig } from "../config/resolve-config.ts";
import { toGatewayError } from "../errors/gateway-error.ts";
import { Ledger } from "../ledger/ledger.ts";
import { MemoryLedgerStore } from "../ledger/memory-ledger-store.ts";
import { Metering } from "../metering/metering.ts";
import { createTiktokenCounter } from "../metering/tiktoken-counter.ts";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import { generateOnRoute } from "./route-chat.ts";
import type { ProviderSlot } from "./create-chat-models.ts";
import { createGatewayTelemetry } from "../telemetry/gateway-telemetry.ts";

// The client leaves while the billed first call is being charged to the budgets (mayTryNext awaits
// the budget store: two Redis round trips). Was: the router checked for that only before, so it
// went on to "call" the second target with an aborted signal; that call never reached the
// provider, yet the request's record billed its prompt (status aborted, counted). And the
// request's record did not say the route fell back from the first call (found by review).

const counter = createTiktokenCounter();
const config = resolveConfig(
  {
    providers: { a: { type: "openai", apiKey: { env: "K" } }, b: { type: "openai", apiKey: { env: "K" } } },
    routes: { r: { targets: [{ provider: "a", model: "gpt-4o" }, { provider: "b", model: "gpt-4o" }] } },
  },
  { K: "sk-test" },
);

describe("client leaves while the earlier billed call is charged", () => {
  it("does not bill the next target, which was never called", async () => {
    const store = new MemoryLedgerStore();
    const ledger = new Ledger({ store, log: () => {} });
    const metering = new Metering({ config, ledger, counter, telemetry: createGatewayTelemetry({ enabled: false }) });
    const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }] };
    const call = metering.start(
      { requestId: "req_x", caller: { kind: "key", key: { id: "k", team: "t", hash: "sha256:x" } }, request, dialect: "openai", receivedAt: performance.now() },
      trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
    );
    let secondCalled = 0;
    const a: ChatModel = {
      providerName: "a", providerType: "openai", baseUrl: "http://a.invalid",
      generate: async () => { throw unfinishedAnswer("a", { inputTokens: 10, outputTokens: 90 }); },
      stream: async function* () {},
    };
    const b: ChatModel = {
      providerName: "b", providerType: "openai", baseUrl: "http://b.invalid",
      generate: async (_r, _m, signal) => {
        if (signal.aborted) throw new DOMException("This operation was aborted", "AbortError"); // as fetch does
        secondCalled++;
        throw new Error("not reached");
      },
      stream: async function* () {},
    };
    const slots = new Map<string, ProviderSlot>([["a", { model: a }], ["b", { model: b }]]);
    const client = new AbortController();
    // The client leaves while the budget store is charging the earlier call.
    call.chargeEarlierCallsWith(async () => { client.abort(); return true; });
    const failure = await generateOnRoute(request, config.routes.r!, slots, client.signal, call).then(() => undefined, (error: unknown) => toGatewayError(error));
    await call.fail(failure!, client.signal.aborted); // what handleChat's catch does
    await ledger.flush();
    const records = [...store.records.values()];
    const main = records.find((record) => record.requestId === "req_x")!;
    const earlier = records.find((record) => record.requestId === "req_x.1")!;
    expect(secondCalled).toBe(0);
    expect(earlier.cost.totalNano).toBe(10 * 2500 + 90 * 10000);
    // The request's record bills nothing more: b was never called.
    expect({ status: main.status, provider: main.provider, totalNano: main.cost.totalNano, estimated: main.estimated }).toMatchObject({ status: "aborted", totalNano: 0, estimated: false });
    // And it says the route had moved on from that call, billed apart (was: nothing did, and two
    // records named call a).
    expect(main.fallbackFrom).toEqual([expect.objectContaining({ provider: "a", model: "gpt-4o" })]);
  });
});
