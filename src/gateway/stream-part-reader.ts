import type { StreamPart } from "../model/stream-part.ts";

/**
 * Reads a stream's parts in order: those already read (the answer's first, at least), then the
 * upstream's. A read that did not settle within a write's turn is kept (`later`) and is the next
 * read's, so no part is asked for twice or lost.
 */
export class PartReader {
  private heldAt = 0;
  /** A `next()` that did not settle within the last write's turn; the next read awaits it. */
  private inFlight: Promise<IteratorResult<StreamPart>> | undefined;

  constructor(
    private readonly held: readonly StreamPart[],
    private readonly rest: AsyncGenerator<StreamPart>,
  ) {}

  next(): Promise<IteratorResult<StreamPart>> {
    if (this.heldAt < this.held.length) return Promise.resolve({ done: false, value: this.held[this.heldAt++]! });
    const promise = this.inFlight ?? this.rest.next();
    this.inFlight = undefined;
    return promise;
  }

  /** A read not settled yet, left for the next `next()`. */
  later(promise: Promise<IteratorResult<StreamPart>>): void {
    this.inFlight = promise;
  }
}
