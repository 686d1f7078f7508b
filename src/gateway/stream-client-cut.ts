import type { StreamPart } from "../model/stream-part.ts";
import { QuietTimer } from "../runtime/quiet-timer.ts";
import type { PartReader } from "./stream-part-reader.ts";

// How a stream ends when its client does not take it to the end: the client went away (it
// cancelled the body), or it stopped reading and is given up on after `sendTimeoutMs`. Either way
// the upstream is stopped and the request closed as cancelled, once; a stream that ends on its own
// (`finish`) is not cut afterwards.

/** A stalled client's cut counts what the provider already sent: parts that come within this of each other… */
const COUNT_ARRIVED_GAP_MS = 100;
/** …for this long at most, then the upstream is stopped. */
const COUNT_ARRIVED_MAX_MS = 3_000;
const NOT_YET = Symbol("not yet");

export type ClientCutOptions = {
  parts: PartReader;
  rest: AsyncGenerator<StreamPart>;
  observe(part: StreamPart): void;
  abortUpstream(): void;
  onClose(outcome: "cancelled"): void;
  /** Stopped with the stream. */
  keepAlive: { stop(): void } | undefined;
  /** How long a client may take no bytes before it is cut (0 or absent: for ever). */
  sendTimeoutMs?: number | undefined;
  /** Closes the connection of a client cut for taking no bytes, where the host can. */
  dropClient?: (() => void) | undefined;
};

export class ClientCut {
  /** The stream has ended (on its own or cut): nothing more goes out. */
  ended = false;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  // Runs from a write until the client asks for the next one: backpressure is fine, for ever is not.
  private readonly stalled: QuietTimer | undefined;

  constructor(private readonly options: ClientCutOptions) {
    this.stalled = options.sendTimeoutMs ? new QuietTimer({ quiet: () => void this.cutStalledClient() }) : undefined;
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  /** The client asks for more: it is reading. */
  reading(): void {
    this.stalled?.pause();
  }

  /** Bytes were written: the client has `sendTimeoutMs` to ask for more. */
  wrote(): void {
    this.stalled?.wait(this.options.sendTimeoutMs!);
  }

  /** The stream ends on its own (completed or failed): no cut from here. */
  finish(): void {
    this.ended = true;
    this.options.keepAlive?.stop();
    this.stalled?.stop();
  }

  /** The client is gone (it cancelled the body): stop the upstream, close once. */
  cancelled(): Promise<void> {
    return this.end();
  }

  /** The client is gone or given up on (`beforehand` cuts it off): stop the upstream, close once. */
  private async end(beforehand?: () => void, countArrived = false): Promise<void> {
    if (this.ended) return;
    this.finish();
    // Before the client is cut off: closing its connection stops the upstream too.
    if (countArrived) await this.countWhatArrived();
    beforehand?.();
    this.options.abortUpstream();
    await this.options.rest.return(undefined).catch(() => undefined);
    this.options.onClose("cancelled");
  }

  // Where the host can close the connection it does (the body's reader is then cancelled);
  // otherwise the errored body ends the response as cut off, never as a complete answer.
  private cutStalledClient(): Promise<void> {
    return this.end(() => {
      if (this.options.dropClient) this.options.dropClient();
      else this.controller?.error(new Error(`the client took no bytes for ${this.options.sendTimeoutMs} ms`));
    }, true);
  }

  /**
   * A client that stopped reading held the upstream back: what the provider sent meanwhile waits
   * in buffers (megabytes: the rest of a long answer, its final usage too), generated and billed.
   * It is read and metered, not sent, while it keeps coming, for 3 seconds at most. Was: dropped
   * with the connection, and a 50,000-token answer recorded as about 35,000 counted tokens.
   */
  private async countWhatArrived(): Promise<void> {
    const until = performance.now() + COUNT_ARRIVED_MAX_MS;
    while (performance.now() < until) {
      const promise = this.options.parts.next();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gap = new Promise<typeof NOT_YET>((resolve) => (timer = setTimeout(() => resolve(NOT_YET), COUNT_ARRIVED_GAP_MS)));
      const result = await Promise.race([promise, gap]).catch(() => undefined);
      clearTimeout(timer);
      if (result === NOT_YET) promise.catch(() => undefined); // settles once the upstream is stopped
      if (result === undefined || result === NOT_YET || result.done) return;
      try {
        this.options.observe(result.value);
      } catch {
        return; // a fault of tollgate's own metering: the cut goes on, the upstream is stopped, the request closed
      }
      if (result.value.type === "error") return;
    }
  }
}
