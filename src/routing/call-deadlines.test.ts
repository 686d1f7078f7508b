import { afterEach, describe, expect, it } from "vitest";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { runningClockCount } from "../runtime/quiet-timer.ts";
import { withDeadlines } from "./call-deadlines.ts";

const answer: ChatResponse = { id: "x", model: "m", content: [{ type: "text", text: "hello" }], finishReason: "stop" };

// A scripted adapter: each step is a delay in ms before the next part ("stall" never comes); an
// answer (not streamed) comes after the first step. Like the real adapters, a stream ends quietly
// when its signal aborts and an answer rejects with the abort; both record that they saw it.
function scriptedModel(steps: (number | "stall")[]) {
  const seen = { aborted: false, returned: false };
  const model: ChatModel = {
    providerName: "scripted",
    providerType: "openai-compatible",
    baseUrl: "http://127.0.0.1:1/v1",
    generate: (_request, _model, signal) =>
      new Promise<ChatResponse>((resolve, reject) => {
        const step = steps[0]!;
        const timer = step === "stall" ? undefined : setTimeout(() => resolve(answer), step);
        signal.addEventListener("abort", () => {
          seen.aborted = true;
          clearTimeout(timer);
          reject(new DOMException("This operation was aborted", "AbortError"));
        }, { once: true });
      }),
    async *stream(_request, _model, signal) {
      signal.addEventListener("abort", () => (seen.aborted = true), { once: true });
      try {
        for (const [index, step] of steps.entries()) {
          const arrived = await new Promise<boolean>((resolve) => {
            const timer = step === "stall" ? undefined : setTimeout(() => resolve(true), step);
            signal.addEventListener("abort", () => (clearTimeout(timer), resolve(false)), { once: true });
          });
          if (!arrived) return;
          yield index === 0 ? { type: "start", id: "x", model: "m" } : { type: "text-delta", text: `t${index}` };
        }
        yield { type: "finish", reason: "stop" };
      } finally {
        seen.returned = true;
      }
    },
  };
  return { model, seen };
}

const request: ChatRequest = { route: "r", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: true, streamUsage: false };

async function collect(parts: AsyncGenerator<StreamPart>, readDelayMs = 0): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of parts) {
    out.push(part);
    if (readDelayMs) await new Promise((resolve) => setTimeout(resolve, readDelayMs));
  }
  return out;
}

describe("stream deadlines", () => {
  // However a stream ended, its clock is no longer watched (no stream leaks into the sweep).
  afterEach(() => expect(runningClockCount()).toBe(0));

  it("lets a stream that keeps producing run longer than both limits together", async () => {
    const { model } = scriptedModel([10, 40, 40, 40, 40, 40]);
    const parts = await collect(withDeadlines(model, { timeoutMs: 100, idleMs: 100 }).stream(request, "m", new AbortController().signal));
    expect(parts.map((part) => part.type)).toEqual(["start", "text-delta", "text-delta", "text-delta", "text-delta", "text-delta", "finish"]);
  });

  it("cuts a stream that goes silent mid-way, aborts the upstream call, and says so", async () => {
    const { model, seen } = scriptedModel([0, 5, "stall"]);
    // A first-part limit past the test's own timeout: only the idle limit can end this stream in time.
    const parts = await collect(withDeadlines(model, { timeoutMs: 60_000, idleMs: 80 }).stream(request, "m", new AbortController().signal));
    expect(parts.slice(0, 2).map((part) => part.type)).toEqual(["start", "text-delta"]);
    const last = parts.at(-1)!;
    expect(last.type).toBe("error");
    const error = (last as { error: GatewayError }).error;
    expect(error).toMatchObject({ kind: "timeout", status: 504, retryable: false });
    expect(error.message).toBe('provider "scripted" went silent for 80 ms mid-stream; the stream was cut off');
    expect(seen.aborted).toBe(true);
    expect(seen.returned).toBe(true);
  });

  it("bounds the wait for the first part with its own limit, and leaves the route free to fall back", async () => {
    const { model, seen } = scriptedModel(["stall"]);
    const parts = await collect(withDeadlines(model, { timeoutMs: 60, idleMs: 10_000 }).stream(request, "m", new AbortController().signal));
    expect(parts).toHaveLength(1);
    const error = (parts[0] as { error: GatewayError }).error;
    expect(error).toMatchObject({ kind: "timeout", retryable: true, message: 'provider "scripted" did not answer within 60 ms' });
    expect(seen.aborted).toBe(true);
  });

  it("holds a preamble followed by silence to the first-part limit, not the idle one, and leaves the route free to fall back", async () => {
    // The first step yields "start" (Anthropic's message_start, OpenAI's role chunk): no answer yet.
    const { model, seen } = scriptedModel([0, "stall"]);
    const parts = await collect(withDeadlines(model, { timeoutMs: 100, idleMs: 20 }).stream(request, "m", new AbortController().signal));
    expect(parts.map((part) => part.type)).toEqual(["start", "error"]);
    const error = (parts[1] as { error: GatewayError }).error;
    // Was: cut by the 20 ms idle limit as "went silent mid-stream", and final (no fallback).
    expect(error).toMatchObject({ kind: "timeout", retryable: true, message: 'provider "scripted" did not answer within 100 ms' });
    expect(seen.aborted).toBe(true);
  });

  it("lets go of its clock at the error part, even if the consumer never asks for more (as the router does on a failed first part)", async () => {
    const { model } = scriptedModel(["stall"]);
    const stream = withDeadlines(model, { timeoutMs: 30, idleMs: 30 }).stream(request, "m", new AbortController().signal);
    expect((await stream.next()).value).toMatchObject({ type: "error" });
    expect(runningClockCount()).toBe(0);
  });

  it("does not count a slow reader's time as upstream silence (backpressure is not a stall)", async () => {
    const { model, seen } = scriptedModel([0, 1, 1, 1, 1]);
    // Each part waits 60 ms in the reader, twice the idle limit; the upstream itself is quick.
    const parts = await collect(withDeadlines(model, { timeoutMs: 30, idleMs: 30 }).stream(request, "m", new AbortController().signal), 60);
    expect(parts.map((part) => part.type)).toEqual(["start", "text-delta", "text-delta", "text-delta", "text-delta", "finish"]);
    expect(seen.aborted).toBe(false);
  });

  it("passes a client that leaves through to the upstream call, with no error of its own", async () => {
    const { model, seen } = scriptedModel([0, "stall"]);
    const client = new AbortController();
    const stream = withDeadlines(model, { timeoutMs: 10_000, idleMs: 10_000 }).stream(request, "m", client.signal);
    expect((await stream.next()).value).toMatchObject({ type: "start" });
    setTimeout(() => client.abort(), 20);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(seen.aborted).toBe(true);
  });

  it("ends the adapter's stream when the reader leaves early", async () => {
    const { model, seen } = scriptedModel([0, 1, 1, 1]);
    const stream = withDeadlines(model, { timeoutMs: 1_000, idleMs: 1_000 }).stream(request, "m", new AbortController().signal);
    await stream.next();
    await stream.return(undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.returned).toBe(true);
  });
});

describe("answer deadline (not streamed)", () => {
  afterEach(() => expect(runningClockCount()).toBe(0));

  it("returns an answer that comes in time", async () => {
    const { model, seen } = scriptedModel([20]);
    await expect(withDeadlines(model, { timeoutMs: 1_000, idleMs: 1_000 }).generate(request, "m", new AbortController().signal)).resolves.toEqual(answer);
    expect(seen.aborted).toBe(false);
  });

  it("cuts an answer that does not come within timeoutMs, aborts the upstream call, and leaves the route free to fall back", async () => {
    const { model, seen } = scriptedModel(["stall"]);
    const call = withDeadlines(model, { timeoutMs: 60, idleMs: 60_000 }).generate(request, "m", new AbortController().signal);
    await expect(call).rejects.toMatchObject({ kind: "timeout", status: 504, retryable: true, message: 'provider "scripted" did not answer within 60 ms' });
    expect(seen.aborted).toBe(true);
  });

  it("passes a client that leaves through to the upstream call as the adapter's own abort, not a timeout", async () => {
    const { model, seen } = scriptedModel(["stall"]);
    const client = new AbortController();
    const call = withDeadlines(model, { timeoutMs: 10_000, idleMs: 10_000 }).generate(request, "m", client.signal);
    setTimeout(() => client.abort(), 20);
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(seen.aborted).toBe(true);
  });
});

describe("count deadlines", () => {
  it("holds a provider's token count to timeoutMs, and keeps no count the adapter lacks", async () => {
    const { model, seen } = scriptedModel(["stall"]);
    const counting: ChatModel = { ...model, countTokens: (_request, _model, signal) => model.generate(request, "m", signal).then(() => 1) };
    const error = await withDeadlines(counting, { timeoutMs: 50, idleMs: 50 }).countTokens!(request, "m", new AbortController().signal).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ kind: "timeout" });
    expect(seen.aborted).toBe(true);
    expect(withDeadlines(model, { timeoutMs: 50, idleMs: 50 }).countTokens).toBeUndefined();
  });
});
