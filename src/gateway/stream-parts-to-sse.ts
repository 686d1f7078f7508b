import type { StreamRenderer } from "../dialects/dialect.ts";
import type { StreamSummary } from "../dialects/stream-summary.ts";
import { toGatewayError } from "../errors/gateway-error.ts";
import type { StreamPart } from "../model/stream-part.ts";

// Turns the committed stream of parts into SSE bytes for the client. Pull-based: the next
// upstream part is read only when the client side asks for more, so a slow client slows the
// upstream read (backpressure) and nothing piles up in memory. Each part is written as soon as
// it arrives: no batching, no timers.

export type SseStreamOptions = {
  first: StreamPart;
  rest: AsyncGenerator<StreamPart>;
  renderer: StreamRenderer;
  /** Called for every part before it is rendered (metering listens here). */
  observe(part: StreamPart): void;
  summary(): StreamSummary;
  /** The client went away: stop the upstream request so nobody pays for unread tokens. */
  abortUpstream(): void;
  onClose(outcome: "completed" | "failed" | "cancelled"): void;
};

const encoder = new TextEncoder();

export function streamPartsToSse(options: SseStreamOptions): ReadableStream<Uint8Array> {
  let pending: StreamPart | undefined = options.first;
  let closed = false;

  const finish = (controller: ReadableStreamDefaultController<Uint8Array>, text: string, outcome: "completed" | "failed") => {
    closed = true;
    if (text) controller.enqueue(encoder.encode(text));
    controller.close();
    options.onClose(outcome);
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Loop until something is written: parts such as `usage` render to nothing.
        while (!closed) {
          let part: StreamPart;
          if (pending) {
            part = pending;
            pending = undefined;
          } else {
            let next: IteratorResult<StreamPart>;
            try {
              next = await options.rest.next();
            } catch (error) {
              return finish(controller, options.renderer.error(toGatewayError(error)), "failed");
            }
            if (next.done) return finish(controller, options.renderer.end(options.summary()), "completed");
            part = next.value;
          }
          options.observe(part);
          if (part.type === "error") return finish(controller, options.renderer.error(part.error), "failed");
          const text = options.renderer.render(part);
          if (text) {
            controller.enqueue(encoder.encode(text));
            return;
          }
        }
      },
      async cancel() {
        if (closed) return;
        closed = true;
        options.abortUpstream();
        await options.rest.return(undefined).catch(() => undefined);
        options.onClose("cancelled");
      },
    },
    // One chunk of read-ahead at most: the upstream is read at the pace the client reads.
    new CountQueuingStrategy({ highWaterMark: 1 }),
  );
}
