import type { StreamRenderer } from "../dialects/dialect.ts";
import type { StreamSummary } from "../dialects/stream-summary.ts";
import { toGatewayError } from "../errors/gateway-error.ts";
import type { StreamPart } from "../model/stream-part.ts";
import { nextTurn } from "../runtime/next-turn.ts";
import { QuietTimer, type QuietListener } from "../runtime/quiet-timer.ts";
import { ClientCut } from "./stream-client-cut.ts";
import { PartReader } from "./stream-part-reader.ts";

// Turns the committed stream of parts into SSE bytes for the client. Pull-based: the next
// upstream part is read only when the client side asks for more, so a slow client slows the
// upstream read (backpressure) and nothing piles up in memory.
//
// No part waits for a later one. But parts that arrived in the same network read are written
// together: after the first part of a write, more are taken only while they are already there
// (before the event loop's next turn). One socket write per burst instead of one per event was
// worth ~2x streaming throughput in the benchmark, at no added latency.

export type SseStreamOptions = {
  /** Parts already read (at least the answer's first), sent before `rest`. */
  held: readonly StreamPart[];
  rest: AsyncGenerator<StreamPart>;
  renderer: StreamRenderer;
  /** Called for every part before it is rendered (metering listens here). */
  observe(part: StreamPart): void;
  /**
   * The figures for the stream's final comment line, asked for once: when the upstream has ended,
   * or after the error event of a stream that failed (what it cost is billed all the same).
   */
  summary(outcome: "completed" | "failed"): Promise<StreamSummary>;
  /** The client went away: stop the upstream request so nobody pays for unread tokens. */
  abortUpstream(): void;
  onClose(outcome: "completed" | "failed" | "cancelled"): void;
  /**
   * While the client has been sent nothing this long, it gets the renderer's keep-alive, so a proxy
   * in front of tollgate does not take the silence (a model reasoning for minutes) for a dead
   * connection. 0 or absent: none.
   */
  keepAliveMs?: number;
  /**
   * While the client has taken none of the bytes written to it for this long (its socket's
   * buffers are full and it reads nothing), the stream is cut as if it had left: the upstream is
   * stopped and the request closed as cancelled. 0 or absent: wait for ever.
   */
  sendTimeoutMs?: number;
  /** Closes the connection of a client cut for taking no bytes, where the host can. */
  dropClient?: (() => void) | undefined;
};

const encoder = new TextEncoder();
/** A burst is cut into writes of about this size, so one write never holds a whole answer. */
export const MAX_WRITE_BYTES = 16 * 1024;
const NOT_YET = Symbol("not yet");

/** The stream's life: started, pulled a burst at a time until it completes or fails, or cut. */
export function streamPartsToSse(options: SseStreamOptions): ReadableStream<Uint8Array> {
  const parts = new PartReader(options.held, options.rest);
  const keepAlive = options.keepAliveMs ? new KeepAlive(options.keepAliveMs, options.renderer) : undefined;
  const cut = new ClientCut({ ...options, parts, keepAlive });

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        cut.start(controller);
        keepAlive?.start(controller);
      },
      async pull(controller) {
        // Cut while the client was not reading: what is left is the cut's to count, not to send
        // (a client that reads again meanwhile must not race it for the upstream's parts).
        if (cut.ended) return;
        cut.reading();
        const { text, outcome } = await readBurst(parts, options, keepAlive);
        if (cut.ended) return; // cut while the burst was read: nothing more goes out
        if (text) controller.enqueue(encoder.encode(text));
        if (!outcome) {
          cut.wrote();
          return;
        }
        cut.finish();
        if (outcome === "failed") await endFailed(controller, options);
        else controller.close();
        options.onClose(outcome);
      },
      cancel: () => cut.cancelled(),
    },
    // One chunk of read-ahead at most: the upstream is read at the pace the client reads.
    new CountQueuingStrategy({ highWaterMark: 1 }),
  );
}

/**
 * Takes parts into one write's text until a write's worth is there or the burst is over (the next
 * part is not there yet); `outcome` says the stream ended with it.
 */
async function readBurst(
  parts: PartReader,
  options: SseStreamOptions,
  keepAlive: KeepAlive | undefined,
): Promise<{ text: string; outcome: "completed" | "failed" | undefined }> {
  let text = "";
  // One marker for the end of this event-loop turn, shared by every part of the burst.
  let turnEnd: Promise<typeof NOT_YET> | undefined;
  const alreadyThere = (promise: Promise<IteratorResult<StreamPart>>) => {
    turnEnd ??= new Promise((resolve) => nextTurn(() => resolve(NOT_YET)));
    return Promise.race([promise, turnEnd]);
  };
  const fill = async (): Promise<"completed" | "failed" | undefined> => {
    while (text.length < MAX_WRITE_BYTES) {
      const promise = parts.next();
      const quiet = text === "";
      let result: IteratorResult<StreamPart> | typeof NOT_YET;
      try {
        if (quiet) {
          keepAlive?.waiting();
          result = await promise;
        } else result = await alreadyThere(promise);
      } catch (error) {
        text += options.renderer.error(toGatewayError(error));
        return "failed";
      }
      if (result === NOT_YET) {
        parts.later(promise);
        return undefined;
      }
      if (result.done) {
        text += options.renderer.end(await options.summary("completed"));
        return "completed";
      }
      const part = result.value;
      options.observe(part);
      if (part.type === "error") {
        text += options.renderer.error(part.error);
        return "failed";
      }
      text += options.renderer.render(part);
      // Only bytes for the client end its silence: a part rendered to nothing (a local
      // model's thinking, for an Anthropic client) leaves the keep-alive clock running.
      if (quiet && text !== "") keepAlive?.arrived();
    }
    return undefined;
  };

  let outcome: "completed" | "failed" | undefined;
  try {
    outcome = await fill();
  } catch (error) {
    // A bug of tollgate's own (rendering, metering): the client still gets an error event
    // in its dialect, the upstream is stopped, and onClose runs, so the request is
    // recorded and its budget settled.
    text += options.renderer.error(toGatewayError(error));
    outcome = "failed";
    options.abortUpstream();
    void options.rest.return(undefined).catch(() => undefined);
  }
  return { text, outcome };
}

/**
 * A failed stream ends with the summary too, after its error event (a comment, which the SDKs
 * skip: they still throw the error). The error goes out first: settling may count the text that
 * came with the tokenizer, which must not hold the error back, so the count starts a turn later,
 * once the error's write is under way. Was: the error event ended the stream, and nothing but
 * the ledger said what the cut stream cost.
 */
async function endFailed(controller: ReadableStreamDefaultController<Uint8Array>, options: SseStreamOptions): Promise<void> {
  await new Promise<void>((resolve) => nextTurn(resolve));
  let summary: StreamSummary | undefined;
  try {
    summary = await options.summary("failed");
  } catch {
    // A fault of tollgate's own metering: the stream ends at its error event; the close still records.
  }
  // The client may have gone meanwhile: its stream is then cancelled and takes nothing more.
  try {
    if (summary) controller.enqueue(encoder.encode(options.renderer.end(summary)));
    controller.close();
  } catch {
    // already cancelled
  }
}

/**
 * Writes the keep-alive only while the stream waits on its upstream: a client that is not reading
 * has a full queue already, and a burst being written is not silence. The silence is the
 * client's: it lasts from the last bytes written until the next, whatever parts came between.
 */
class KeepAlive implements QuietListener {
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private readonly clock = new QuietTimer(this);
  private silent = false;

  constructor(
    private readonly everyMs: number,
    private readonly renderer: StreamRenderer,
  ) {}

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  /** The stream waits on its upstream; a silence already running goes on. */
  waiting(): void {
    if (this.silent) return;
    this.silent = true;
    this.clock.wait(this.everyMs);
  }

  /** Bytes for the client: the silence is over. */
  arrived(): void {
    this.silent = false;
    this.clock.pause();
  }

  stop(): void {
    this.clock.stop();
    this.controller = undefined;
  }

  quiet(): void {
    this.controller?.enqueue(encoder.encode(this.renderer.keepAlive()));
    this.clock.wait(this.everyMs); // still waiting: the next keep-alive is due a whole interval from now
  }
}
