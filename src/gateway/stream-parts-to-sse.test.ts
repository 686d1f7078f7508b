import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runningClockCount } from "../runtime/quiet-timer.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { AnthropicStreamRenderer } from "../dialects/anthropic/render-anthropic-stream.ts";
import { OpenAIStreamRenderer } from "../dialects/openai/render-openai-stream.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { MAX_WRITE_BYTES, streamPartsToSse, type SseStreamOptions } from "./stream-parts-to-sse.ts";

const summary = async () => ({
  requestId: "r", route: "gpt", provider: "p", model: "m", inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0, costUsd: "0", cacheSavingsUsd: "0", policies: [], ttftMs: null, estimated: false, unpriced: false,
});

/** The stream under test, with no-op hooks unless a test overrides them. */
function sseFrom(rest: AsyncGenerator<StreamPart>, overrides: Partial<SseStreamOptions> = {}) {
  return streamPartsToSse({
    held: [{ type: "start", id: "c1", model: "m" }],
    rest,
    renderer: new OpenAIStreamRenderer(false),
    observe: () => {},
    summary,
    abortUpstream: () => {},
    onClose: () => {},
    ...overrides,
  });
}

function endlessUpstream() {
  const state = { pulled: 0, returned: false };
  async function* parts(): AsyncGenerator<StreamPart> {
    try {
      for (;;) {
        state.pulled++;
        yield { type: "text-delta", text: `t${state.pulled}` };
      }
    } finally {
      state.returned = true;
    }
  }
  return { state, parts: parts() };
}

describe("streamPartsToSse", () => {
  it("reads the upstream only as fast as the client reads (backpressure)", async () => {
    const { state, parts } = endlessUpstream();
    const reader = sseFrom(parts).getReader();
    let bytes = 0;
    for (let i = 0; i < 5; i++) bytes += (await reader.read()).value!.byteLength;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const pulledWhileIdle = state.pulled;
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The client stopped reading, so the upstream is not read any further...
    expect(state.pulled).toBe(pulledWhileIdle);
    // ...and what was read from it is what the client got plus at most one write of read-ahead.
    const sizer = new OpenAIStreamRenderer(false);
    sizer.render({ type: "start", id: "c1", model: "m" });
    const smallestPartBytes = sizer.render({ type: "text-delta", text: "t1" }).length;
    expect(state.pulled).toBeLessThanOrEqual(Math.ceil((bytes + MAX_WRITE_BYTES) / smallestPartBytes) + 2);
    // Parts that were ready together went out together: far fewer writes than parts.
    expect(state.pulled).toBeGreaterThan(5 * 10);
    await reader.cancel();
  });

  it("aborts the upstream and closes its iterator when the client cancels", async () => {
    const { state, parts } = endlessUpstream();
    let aborted = false;
    let outcome = "";
    const reader = sseFrom(parts, { abortUpstream: () => (aborted = true), onClose: (result) => (outcome = result) }).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(aborted).toBe(true);
    expect(state.returned).toBe(true);
    expect(outcome).toBe("cancelled");
  });

  it("ends with an error event in the dialect, never a clean [DONE], then the failed stream's summary, when the upstream fails mid-stream", async () => {
    async function* failing(): AsyncGenerator<StreamPart> {
      yield { type: "text-delta", text: "Hel" };
      yield { type: "error", error: new GatewayError("unavailable", "provider \"a\" is overloaded: Overloaded") };
    }
    const asked: string[] = [];
    const text = await new Response(sseFrom(failing(), { renderer: new OpenAIStreamRenderer(true), summary: (outcome) => (asked.push(outcome), summary()) })).text();
    const events = text.trim().split("\n\n");
    expect(events.at(-2)).toBe(
      'data: {"error":{"message":"provider \\"a\\" is overloaded: Overloaded","type":"server_error","param":null,"code":null}}',
    );
    expect(events.at(-1)).toBe(`: tollgate ${JSON.stringify(await summary())}`);
    expect(text).not.toContain("[DONE]");
    expect(asked).toEqual(["failed"]);
  });

  it("ends with the error event, then the summary, when reading the upstream throws (a connection cut)", async () => {
    async function* cut(): AsyncGenerator<StreamPart> {
      yield { type: "text-delta", text: "Hel" };
      throw new GatewayError("upstream", 'provider "a" lost its connection mid-stream');
    }
    const closes: string[] = [];
    const text = await new Response(sseFrom(cut(), { onClose: (outcome) => closes.push(outcome) })).text();
    const events = text.trim().split("\n\n");
    expect(events.at(-2)).toContain('lost its connection mid-stream');
    expect(events.at(-1)).toBe(`: tollgate ${JSON.stringify(await summary())}`);
    expect(closes).toEqual(["failed"]);
  });

  it("sends a failed stream's error event before its summary is settled (settling may count tokens), and closes after it", async () => {
    async function* failing(): AsyncGenerator<StreamPart> {
      yield { type: "text-delta", text: "Hel" };
      yield { type: "error", error: new GatewayError("unavailable", "provider \"a\" is overloaded: Overloaded") };
    }
    let settle: () => void = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const closes: string[] = [];
    const reader = sseFrom(failing(), { summary: async () => (await settled, summary()), onClose: (outcome) => closes.push(outcome) }).getReader();
    const decoder = new TextDecoder();
    let received = "";
    while (!received.includes('"error"')) received += decoder.decode((await reader.read()).value);
    expect(received).not.toContain(": tollgate");
    expect(closes).toEqual([]);
    settle();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    expect(rest).toBe(`: tollgate ${JSON.stringify(await summary())}\n\n`);
    expect(closes).toEqual(["failed"]);
  });
});

describe("streamPartsToSse keep-alives", () => {
  // On a clock the test moves, so a busy machine cannot stretch a 5 ms pause past a keep-alive
  // interval (or squeeze the quiet out of a 150 ms one): the keep-alives are exactly the ones due.
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] }));
  // A finished stream's keep-alive clock is no longer watched.
  afterEach(() => {
    expect(runningClockCount()).toBe(0);
    // The shared sweep stops (and forgets its pace) at its next tick with no clock left: let that
    // tick come on this fake clock, or the next test's clocks would wait on a timer that is gone.
    vi.advanceTimersByTime(1_000);
    vi.useRealTimers();
  });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Reads the whole body while the clock runs on, 1 ms at a time. */
  const readAll = async (body: ReadableStream<Uint8Array>) => {
    let done = false;
    const text = new Response(body).text().finally(() => (done = true));
    for (let ms = 0; !done && ms < 10_000; ms++) await vi.advanceTimersByTimeAsync(1);
    return text;
  };

  it("writes the dialect's keep-alive while the upstream is quiet, between the parts around the silence", async () => {
    async function* parts(): AsyncGenerator<StreamPart> {
      yield { type: "text-delta", text: "before" };
      await pause(150); // over three keep-alive intervals of quiet
      yield { type: "text-delta", text: "after" };
    }
    const text = await readAll(sseFrom(parts(), { keepAliveMs: 40 }));
    const events = text.trim().split("\n\n");
    const before = events.findIndex((event) => event.includes('"before"'));
    const after = events.findIndex((event) => event.includes('"after"'));
    const keepAlives = events.flatMap((event, index) => (event === ": keep-alive" ? [index] : []));
    // 150 ms of quiet at one keep-alive per 40 ms: at 40, 80 and 120 ms.
    expect(keepAlives).toHaveLength(3);
    expect(keepAlives.every((index) => index > before && index < after)).toBe(true);
  });

  it("writes none while parts keep coming, and lets go of its clock once the stream has closed", async () => {
    async function* parts(): AsyncGenerator<StreamPart> {
      for (let i = 0; i < 5; i++) {
        await pause(5);
        yield { type: "text-delta", text: `t${i}` };
      }
    }
    const text = await readAll(sseFrom(parts(), { keepAliveMs: 40 }));
    expect(text).not.toContain("keep-alive");
    expect(runningClockCount()).toBe(0);
  });

  it("counts parts the client is not sent as silence (a local model's thinking, for an Anthropic client)", async () => {
    async function* parts(): AsyncGenerator<StreamPart> {
      for (let i = 0; i < 30; i++) {
        await pause(5);
        yield { type: "reasoning-delta", text: "thinking " };
      }
      yield { type: "text-delta", text: "42" };
    }
    const text = await readAll(sseFrom(parts(), { keepAliveMs: 40, renderer: new AnthropicStreamRenderer() }));
    const events = text.trim().split("\n\n");
    const pings = events.flatMap((event, index) => (event.startsWith("event: ping") ? [index] : []));
    // 30 × 5 ms of thinking the client is not sent is 150 ms of silence: pings at 40, 80, 120 ms.
    expect(pings).toHaveLength(3);
    expect(pings.every((index) => index < events.findIndex((event) => event.includes('"42"')))).toBe(true);
  });
});

describe("streamPartsToSse when tollgate itself fails", () => {
  it("ends the stream with an error event and still reports the close (so the request is recorded)", async () => {
    async function* parts(): AsyncGenerator<StreamPart> {
      yield { type: "text-delta", text: "fine" };
    }
    const closes: string[] = [];
    const renderer = new OpenAIStreamRenderer(false);
    const body = sseFrom(parts(), {
      summary: async () => {
        throw new Error("metering bug");
      },
      renderer,
      onClose: (outcome) => closes.push(outcome),
    });
    const text = await new Response(body).text();
    expect(text).toContain('"content":"fine"');
    expect(text).toContain("tollgate hit an internal error");
    expect(closes).toEqual(["failed"]);
  });
});

describe("streamPartsToSse with a client that stops reading", () => {
  it("cuts the stream after sendTimeoutMs without a read: upstream stopped, close reported, body errored", async () => {
    const { state, parts } = endlessUpstream();
    let aborted = false;
    const closes: string[] = [];
    const reader = sseFrom(parts, { sendTimeoutMs: 40, abortUpstream: () => (aborted = true), onClose: (outcome) => closes.push(outcome) }).getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(aborted).toBe(true);
    expect(state.returned).toBe(true);
    expect(closes).toEqual(["cancelled"]);
    // Without a host that can close the connection (Workers), the body itself ends as cut off.
    await expect(reader.read()).rejects.toThrow("the client took no bytes for 40 ms");
    expect(runningClockCount()).toBe(0);
  });

  it("with a host that can, closes the connection instead of erroring the body", async () => {
    const { parts } = endlessUpstream();
    let dropped = 0;
    const reader = sseFrom(parts, { sendTimeoutMs: 40, dropClient: () => dropped++ }).getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(dropped).toBe(1);
    await reader.cancel(); // what @hono/node-server does when the socket closes
    expect(runningClockCount()).toBe(0);
  });

  it("does not cut a client that reads slowly, however long the stream runs", async () => {
    const { state, parts } = endlessUpstream();
    let aborted = false;
    // Each gap is a twentieth of the timeout, and all of them together are longer than it. (A gap
    // of 25 ms against 60 ms was cut when a busy machine fired the 25 ms timer late.)
    const reader = sseFrom(parts, { sendTimeoutMs: 1_000, abortUpstream: () => (aborted = true) }).getReader();
    for (let i = 0; i < 25; i++) {
      await reader.read();
      await new Promise((resolve) => setTimeout(resolve, 50)); // 1.25 s in all, 50 ms between reads
    }
    expect(aborted).toBe(false);
    expect(state.returned).toBe(false);
    await reader.cancel();
    expect(runningClockCount()).toBe(0);
  });
});
