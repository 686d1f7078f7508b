import { GatewayError } from "../../src/errors/gateway-error.ts";
import { describeBytes, joinBytes } from "./body-bound.ts";

/**
 * The most bytes one server-sent event may take before the call fails: 16 MiB. Every SSE parser
 * in the path (eventsource-parser for local decoders, the official SDKs' own decoders) keeps an
 * unfinished event in memory until its blank line, so an upstream that never ends one (bytes
 * without a line end, forever, or a multi-GB event) grew the gateway's memory, for every tenant,
 * until the process died. Real events are far smaller: a chunk is a few tokens, and the largest
 * (a server tool's whole result in Claude's content_block_start, which the model then reads) is
 * held to what a context window takes, a few MB at most. Not configurable: no real stream comes near it.
 */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * A provider's event past the bound. Retryable, and not billed, as a connection lost before the
 * answer began is: FinishCheck bills it where the answer had begun (the usual cut stream).
 */
export class EventTooLongError extends GatewayError {
  constructor(providerName: string, limit: number) {
    super("upstream", `provider "${providerName}" sent a stream event longer than ${describeBytes(limit)} without ending it; tollgate stops reading a stream there`, { retryable: true });
  }
}

/**
 * Counts the bytes of a stream's unfinished event, chunk by chunk, and throws EventTooLongError
 * when they pass the bound. An event ends at a blank line (LF LF, or CRLF CRLF); the scan goes
 * back from each chunk's last LF with the engine's lastIndexOf, so a chunk that ends an event
 * (nearly all do) costs one search from its end and no per-byte loop.
 */
export class EventBound {
  /** Bytes since the last blank line. */
  private pending = 0;
  /** Whether the line being read so far is empty (nothing, or a lone CR, since the last LF). */
  private lineEmpty = true;

  constructor(
    private readonly providerName: string,
    private readonly limit = MAX_EVENT_BYTES,
  ) {}

  /** Where the chunk's unfinished event starts (its length when it ends on an event's end), or -1 when no event ends in it. */
  see(chunk: Uint8Array): number {
    const length = chunk.length;
    const lastLf = chunk.lastIndexOf(LF);
    let end = -1;
    if (lastLf < 0) {
      this.pending += length;
      // A lone CR keeps the line empty: CRLF split across two reads.
      this.lineEmpty &&= length === 0 || (length === 1 && chunk[0] === CR);
    } else {
      end = lastEventEnd(chunk, lastLf, this.lineEmpty);
      this.pending = end < 0 ? this.pending + length : length - 1 - end;
      const after = length - 1 - lastLf;
      this.lineEmpty = after === 0 || (after === 1 && chunk[length - 1] === CR);
    }
    if (this.pending > this.limit) throw new EventTooLongError(this.providerName, this.limit);
    return end < 0 ? -1 : end + 1;
  }
}

/**
 * The index of the chunk's last LF that ends a blank line (an event's end), or -1. `lineEmpty`:
 * whether the line the chunk starts in was empty before it.
 */
function lastEventEnd(chunk: Uint8Array, lastLf: number, lineEmpty: boolean): number {
  for (let lf = lastLf; ; ) {
    let before = lf - 1;
    if (before >= 0 && chunk[before] === CR) before--;
    // The line began in an earlier chunk: blank if nothing of it came there.
    if (before < 0) return lineEmpty ? lf : -1;
    if (chunk[before] === LF) return lf;
    lf = chunk.lastIndexOf(LF, before);
    if (lf < 0) return -1;
  }
}

/**
 * The body of a streamed answer (an SSE response of an SDK's fetch), bounded: a read past the
 * bound fails with EventTooLongError, which the SDK's stream throws as it is, and cancels the
 * upstream body, so its connection closes instead of streaming on. Each read is passed on up to
 * its last event's end, the unfinished event's bytes with the read that ends it: the OpenAI SDK
 * copies and scans, byte by byte in JS, all it holds of an event on every read (16 MiB arriving
 * in 64 KiB reads: about 30 s of CPU), and an event whole in one read costs it one scan. The
 * parsers could use no part of an event before its end anyway.
 */
export function boundedBody(body: ReadableStream<Uint8Array>, bound: EventBound): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let held: Uint8Array[] = [];
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            if (held.length > 0) controller.enqueue(joinBytes(held));
            return controller.close();
          }
          let tail: number;
          try {
            tail = bound.see(value);
          } catch (error) {
            held = [];
            reader.cancel(error).catch(() => undefined);
            throw error;
          }
          if (tail < 0) {
            held.push(value);
            continue;
          }
          // Nearly every read: nothing held, and the read ends on an event's end.
          const ready = tail === value.length ? value : value.subarray(0, tail);
          controller.enqueue(held.length === 0 ? ready : joinBytes([...held, ready]));
          held = tail === value.length ? [] : [value.subarray(tail)];
          return;
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    // Pull-based: the upstream is read only as fast as the SDK reads.
    { highWaterMark: 0 },
  );
}
