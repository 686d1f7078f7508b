import { expect, it } from "vitest";
import { OpenAIStreamRenderer } from "../dialects/openai/render-openai-stream.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { streamPartsToSse } from "./stream-parts-to-sse.ts";

// A stream cut for a client that took no bytes first counts what the provider had already sent
// (countWhatArrived). That count must keep the cut's promises: the upstream stopped and the
// request closed once, whatever happens while it runs.

const summary = async () => ({ requestId: "r", route: "gpt", provider: "p", model: "m", inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0, costUsd: "0", cacheSavingsUsd: "0", policies: [], ttftMs: null, estimated: false, unpriced: false });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Parts handed out one by one as the test pushes them; null ends the stream. */
function pushedParts() {
  const waiting: ((part: StreamPart | null) => void)[] = [];
  const ready: (StreamPart | null)[] = [];
  const take = () => new Promise<StreamPart | null>((resolve) => (ready.length > 0 ? resolve(ready.shift()!) : waiting.push(resolve)));
  const push = (part: StreamPart | null) => (waiting.length > 0 ? waiting.shift()!(part) : ready.push(part));
  async function* parts(): AsyncGenerator<StreamPart> {
    for (;;) {
      const part = await take();
      if (!part) return;
      yield part;
    }
  }
  return { push, parts: parts() };
}

// Was: a throw there rejected the cut, run from a timer: unhandled, and neither the upstream was
// stopped nor the request closed (no record, the reservation held).
it("a fault of the metering while it counts: the upstream is still stopped and the request closed", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const { push, parts } = pushedParts();
    const events: string[] = [];
    let counting = false;
    const body = streamPartsToSse({
      held: [{ type: "start", id: "c1", model: "m" }],
      rest: parts,
      renderer: new OpenAIStreamRenderer(false),
      observe: () => {
        if (counting) throw new Error("a metering bug");
      },
      summary,
      abortUpstream: () => (events.push("abort"), push(null)),
      onClose: (outcome) => events.push(`close:${outcome}`),
      sendTimeoutMs: 40,
      dropClient: () => events.push("drop"),
    });
    await body.getReader().read(); // then the client reads no more
    push({ type: "text-delta", text: "a" }); // taken ahead into the body's queue, which is then full
    await sleep(60); // the cut began (40 ms), and counts what comes
    counting = true;
    push({ type: "text-delta", text: "arrived" });
    await sleep(300);
    expect(events).toEqual(["drop", "abort", "close:cancelled"]);
    expect(unhandled).toEqual([]);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

// Was: a read of the client's after the cut began started a pull beside the count; both took the
// upstream's parts, and the pull that met its end summarized the cut stream as complete.
it("a client that reads again while the cut counts: every part counted once, in order, and the stream never summarized", async () => {
  const { push, parts } = pushedParts();
  const observed: string[] = [];
  const events: string[] = [];
  const body = streamPartsToSse({
    held: [{ type: "start", id: "c1", model: "m" }],
    rest: parts,
    renderer: new OpenAIStreamRenderer(false),
    observe: (part) => {
      if (part.type === "text-delta") observed.push(part.text);
    },
    summary: async () => (events.push("summary"), summary()),
    abortUpstream: () => (events.push("abort"), push(null)),
    onClose: (outcome) => events.push(`close:${outcome}`),
    sendTimeoutMs: 40,
  });
  const reader = body.getReader();
  await reader.read();
  push({ type: "text-delta", text: "a" });
  await sleep(65); // "a" went out; the client read no more, and the cut began
  const pending = reader.read();
  await sleep(5);
  for (const text of ["b", "c", "d"]) push({ type: "text-delta", text });
  push(null);
  await pending.catch(() => undefined);
  await sleep(300);
  expect(observed).toEqual(["a", "b", "c", "d"]);
  expect(events.filter((event) => event.startsWith("close:"))).toEqual(["close:cancelled"]);
  expect(events).not.toContain("summary");
});
