import { describe, expect, it } from "vitest";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { withDeadlines } from "./call-deadlines.ts";
import type { ProviderSlot } from "./create-chat-models.ts";
import { streamOnRoute } from "./route-chat.ts";
import { runningClockCount } from "../runtime/quiet-timer.ts";

// A stream silent for commitAfterMs after its first chunk is committed with a `rest` that first
// awaits the part still on its way. A consumer that gives up right after that part (the client
// left) must still end the adapter's stream: its finally blocks run and its deadline clock goes.
// Used to be wrong: return() reached only the wrapper, so the adapter's stream hung for good.

function scriptedModel() {
  const seen = { returned: false };
  const model: ChatModel = {
    providerName: "scripted",
    providerType: "openai-compatible",
    baseUrl: "http://127.0.0.1:1/v1",
    generate: () => Promise.reject(new Error("not used")),
    async *stream(_request, _model, signal) {
      const wait = (ms: number) =>
        new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), ms);
          signal.addEventListener("abort", () => (clearTimeout(timer), resolve(false)), { once: true });
        });
      try {
        yield { type: "start", id: "x", model: "m" };
        if (!(await wait(120))) return; // a reasoning model, silent before its first token
        yield { type: "text-delta", text: "first" };
        if (!(await wait(50))) return;
        yield { type: "text-delta", text: "second" };
        yield { type: "finish", reason: "stop" };
      } finally {
        seen.returned = true;
      }
    },
  };
  return { model, seen };
}

const request: ChatRequest = { route: "r", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: true, streamUsage: false };
const route = { targets: [{ provider: "scripted", model: "m" }] } as unknown as RouteConfig;

describe("a stream committed after silence, given up after its first answer part", () => {
  it("ends the adapter's stream and lets go of its deadline clock", async () => {
    const { model, seen } = scriptedModel();
    const slots = new Map<string, ProviderSlot>([["scripted", { model: withDeadlines(model, { timeoutMs: 60_000, idleMs: 60_000 }) }]]);
    const upstream = new AbortController();
    const clocksBefore = runningClockCount();

    const routed = await streamOnRoute(request, route, slots, upstream.signal, undefined, undefined, 30);
    expect(routed.held.map((part: StreamPart) => part.type)).toEqual(["start"]); // committed by the silence
    const first = await routed.rest.next();
    expect(first.value).toEqual({ type: "text-delta", text: "first" });

    // What streamPartsToSse's cancel() does when the client goes away now.
    upstream.abort(new Error("client disconnected"));
    await routed.rest.return(undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(seen.returned, "the adapter's stream was ended").toBe(true);
    expect(runningClockCount(), "the watchdog's clock was let go").toBe(clocksBefore);
  });
});
