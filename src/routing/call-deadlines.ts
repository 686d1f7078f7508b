import { cutAfterHeaders } from "../../adapters/shared/finish-check.ts";
import { didNotAnswer } from "../../adapters/shared/timeouts.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ChatModel } from "../model/chat-model.ts";
import { isPreamble, type StreamPart } from "../model/stream-part.ts";
import { QuietTimer, type QuietListener } from "../runtime/quiet-timer.ts";

// The provider's deadlines, kept here for every adapter alike. The official SDKs' `timeout` ends
// when the response headers arrive: a provider that sends headers and then nothing would hold the
// call (and its budget reservation, which the keeper renews) for as long as the connection lives.
//
// - An answer (not streamed) must be complete within the provider's `timeoutMs` of the call.
// - A stream's answer must begin within `timeoutMs` of the call (a preamble is not an answer);
//   after that, the upstream may not go silent for longer than `streamIdleTimeoutMs` between two
//   parts. A stream that keeps producing may run as long as it needs (a local decoder writing
//   30,000 tokens takes many minutes).
//
// A call that misses its deadline is cut: the upstream request is aborted, and the client gets a
// timeout error in its dialect. Before anything reached the client, the route's next target may
// still answer (the error is retryable).
//
// Only time spent waiting on the upstream counts. While the client reads slowly, a stream sits at
// its `yield` and the clock is not running: backpressure is not a stall.
//
// The host's stop is the last deadline: a stream still running when the gateway stops (after
// its drain) is cut the same way, and the client gets an error event saying so in its dialect,
// where a closed socket would read as a network fault.

export type CallDeadlines = {
  timeoutMs: number;
  idleMs: number;
  /** Aborted when the host stops: streams still running are cut. */
  stop?: AbortSignal;
};

/** Why a stream cut at the host's stop failed, as the client reads it. */
export const STOPPING_MESSAGE = "tollgate is shutting down and cut this stream off; send the request again";

export function withDeadlines(model: ChatModel, deadlines: CallDeadlines): ChatModel {
  return {
    providerName: model.providerName,
    providerType: model.providerType,
    baseUrl: model.baseUrl,
    ...(model.refuse ? { refuse: model.refuse } : {}),
    generate: (request, modelName, signal, headers) => answerWithin(model, deadlines.timeoutMs, signal, (inner) => model.generate(request, modelName, inner, headers)),
    stream: (request, modelName, signal, headers) => guarded(model, deadlines, signal, (inner) => model.stream(request, modelName, inner, headers)),
    ...(model.countTokens ? { countTokens: (request, modelName, signal, headers) => answerWithin(model, deadlines.timeoutMs, signal, (inner) => model.countTokens!(request, modelName, inner, headers)) } : {}),
  };
}

async function answerWithin<Answer>(
  model: ChatModel,
  timeoutMs: number,
  client: AbortSignal,
  call: (signal: AbortSignal) => Promise<Answer>,
): Promise<Answer> {
  const watchdog = new Watchdog(client);
  watchdog.waitAtMost(timeoutMs);
  try {
    return await call(watchdog.signal);
  } catch (error) {
    // Whatever the adapter made of the abort, the reason is the deadline. Cut while its body was
    // being read, the answer had begun: the provider had taken the call, which is billed (the
    // prompt, as counted), as a stream cut by its deadline after it began is.
    if (watchdog.fired) {
      const where = `provider "${model.providerName}"`;
      if (cutAfterHeaders(error)) throw new GatewayError("timeout", `${where} did not finish its answer within ${timeoutMs} ms`, { retryable: true, billed: {}, cause: error });
      throw new GatewayError("timeout", didNotAnswer(where, timeoutMs), { retryable: true, cause: error });
    }
    throw error;
  } finally {
    watchdog.stop();
  }
}

async function* guarded(
  model: ChatModel,
  { timeoutMs, idleMs, stop }: CallDeadlines,
  client: AbortSignal,
  open: (signal: AbortSignal) => AsyncGenerator<StreamPart>,
): AsyncGenerator<StreamPart> {
  const watchdog = new Watchdog(client, stop);
  const startedAt = performance.now();
  const parts = open(watchdog.signal);
  // Until the answer's first part, the call is held to `timeoutMs` from its start: a preamble
  // (message_start, the role chunk) followed by silence is a provider that has not answered, and
  // the route's next target may still (the router has committed nothing yet).
  let first = true;
  /** A part came: the provider took the call, and a cut now is billed. */
  let began = false;
  try {
    for (;;) {
      watchdog.waitAtMost(first ? Math.max(1, timeoutMs - (performance.now() - startedAt)) : idleMs);
      const next = await parts.next();
      watchdog.arrived();
      // Once the watchdog fired, whatever the adapter made of the abort is replaced by why it fired.
      if (watchdog.fired === "stop") {
        watchdog.stop();
        // Not retryable: the route's next target would be cut by the same stop.
        yield { type: "error", error: new GatewayError("unavailable", STOPPING_MESSAGE, { code: "gateway_stopping", ...(began ? { billed: {} } : {}) }) };
        return;
      }
      if (watchdog.fired) {
        const where = `provider "${model.providerName}"`;
        const message = first ? didNotAnswer(where, timeoutMs) : `${where} went silent for ${idleMs} ms mid-stream; the stream was cut off`;
        watchdog.stop(); // now, not when the consumer gets round to ending this generator
        // Before the first part, the route's next target may still answer.
        yield { type: "error", error: new GatewayError("timeout", message, { retryable: first, ...(began ? { billed: {} } : {}) }) };
        return;
      }
      if (next.done) return;
      began = true;
      if (first && !isPreamble(next.value)) first = false;
      // An error part is the stream's last: the deadlines are over.
      if (next.value.type === "error") watchdog.stop();
      yield next.value;
    }
  } finally {
    watchdog.stop();
    // Leaving early (the client went away, or a failure) must also end the adapter's stream.
    void parts.return(undefined).catch(() => undefined);
  }
}

/** The client's signal, the deadline and the host's stop, as one signal for the adapter's call. */
class Watchdog implements QuietListener {
  private readonly controller = new AbortController();
  private readonly clock = new QuietTimer(this);
  /** Why the call was cut by tollgate: a deadline ran out, or the host stopped. */
  fired: false | "deadline" | "stop" = false;

  constructor(
    private readonly client: AbortSignal,
    private readonly hostStop?: AbortSignal,
  ) {
    // `this` as the listener of both (handleEvent): no closure per stream.
    if (client.aborted) this.controller.abort(client.reason);
    else client.addEventListener("abort", this, { once: true });
    if (hostStop?.aborted) this.stopped();
    else hostStop?.addEventListener("abort", this, { once: true });
  }

  /** What the adapter's call listens to: the client leaving, or this watchdog firing. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  waitAtMost(limitMs: number): void {
    this.clock.wait(limitMs);
  }

  arrived(): void {
    this.clock.pause();
  }

  stop(): void {
    this.clock.stop();
    this.client.removeEventListener("abort", this);
    this.hostStop?.removeEventListener("abort", this);
  }

  /** The client went away, or the host stopped. */
  handleEvent(event: Event): void {
    if (event.target === this.hostStop) this.stopped();
    else this.controller.abort(this.client.reason);
  }

  private stopped(): void {
    this.cut("stop", new DOMException("the gateway is stopping", "AbortError"));
  }

  /** A deadline ran out. */
  quiet(limitMs: number): void {
    this.cut("deadline", new DOMException(`no answer within ${limitMs} ms`, "TimeoutError"));
  }

  private cut(why: "deadline" | "stop", reason: DOMException): void {
    // The client left first (or the other cause came first): that abort is the reason.
    if (this.controller.signal.aborted) return;
    this.fired = why;
    this.controller.abort(reason);
  }
}
