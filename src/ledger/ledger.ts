import type { CostRecord } from "../metering/cost-record.ts";
import { UnwritableRecords, type AggregateEntry, type LedgerStore } from "./ledger-store.ts";
import { nextTurn } from "../runtime/next-turn.ts";

// Records leave the request path here. `record()` only queues: the write happens on a later turn
// of the event loop, after the answer's last byte went out, and many records share one write
// (one Redis round trip for a whole batch). A failed write keeps its records at the head of the
// queue and is retried with backoff; nothing is dropped for a store being down. Nor does the queue
// grow without bound meanwhile (routes without budgets keep serving through a Redis outage):
// past `maxQueued`, the newest records go where `keepUnwritten` keeps them (the Node entry: a
// file that the gateway writes to Redis once it is back). A store with nowhere else to keep them
// (the embedded file on a full disk, whose directory is that same disk) logs each record past
// `maxQueued` whole instead, one line each, as close() does with what it can neither write nor keep.

export type LedgerOptions = {
  store: LedgerStore;
  log?: (line: string) => void;
  /** Records written in one call to the store. */
  maxBatch?: number;
  /** First retry delay after a failed write; doubles up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * When a queued record is written: by default on a later turn of the event loop, so that the
   * records of one turn share a write. The Workers entry writes at once, because work left for a
   * later turn may not run once a Worker's response is done.
   */
  schedule?: (flush: () => void) => void;
  /**
   * Where records go that `close()` could not write by its deadline, and those past `maxQueued`
   * while the store is down (the Node entry: a file that the gateway, or the next one, writes to
   * Redis). Returns where they were kept. Without it, records past `maxQueued` and those `close()`
   * could not write go to the log, each whole on a line of its own ("set aside: {…}").
   */
  keepUnwritten?: (records: readonly CostRecord[]) => Promise<string>;
  /** The most records held in memory while the store is down; the rest go to `keepUnwritten`, or to the log. */
  maxQueued?: number;
};

/** About 7 MB of records: an outage of seconds stays in memory; a long one goes to `keepUnwritten` (or the log). */
const DEFAULT_MAX_QUEUED = 10_000;
const KEEP_RETRY_MS = 30_000;

export class Ledger {
  private readonly queue: CostRecord[] = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  /** Why the last write failed, for the lines of records set aside meanwhile. */
  private lastFailure = "";
  private closing = false;
  private failedWhileClosing = false;
  private readonly store: LedgerStore;
  private readonly log: (line: string) => void;
  private readonly maxBatch: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly scheduleFlush: (flush: () => void) => void;
  private readonly keepUnwritten: LedgerOptions["keepUnwritten"];
  private readonly maxQueued: number;
  /** Records on their way to `keepUnwritten` past the bound: one batch at a time. */
  private keeping: Promise<void> | undefined;
  private beingKept = 0;
  /** After a failure to keep records, none is tried for a while (not one try per new record). */
  private keepPausedUntil = 0;

  constructor({ store, log = console.error, maxBatch = 256, retryDelayMs = 100, maxRetryDelayMs = 30_000, schedule = nextTurn, keepUnwritten, maxQueued = DEFAULT_MAX_QUEUED }: LedgerOptions) {
    this.store = store;
    this.keepUnwritten = keepUnwritten;
    // Above a write's batch: the records being written are always the head of the queue.
    this.maxQueued = Math.max(maxQueued, 2 * maxBatch);
    this.scheduleFlush = schedule;
    this.log = log;
    this.maxBatch = maxBatch;
    this.retryDelayMs = retryDelayMs;
    this.maxRetryDelayMs = maxRetryDelayMs;
  }

  /** Queues a record; returns at once. */
  record(record: CostRecord): void {
    this.queue.push(record);
    if (this.queue.length > this.maxQueued && !this.closing) {
      const canKeep = this.keepUnwritten !== undefined && Date.now() >= this.keepPausedUntil;
      if (canKeep && this.beingKept === 0) this.keepOverflow();
      // Nowhere to keep it (a full disk under the embedded store, or Redis down and the kept file
      // failing too): the log. A store that is slow but writing catches up: only one that fails
      // sets records aside. Was: held in memory, without bound, for as long as that lasted.
      else if (!canKeep && this.failures > 0) this.setAside(this.queue.pop()!);
    }
    this.schedule();
  }

  /**
   * A record past `maxQueued` with nowhere to keep it (a full disk under the embedded store): the
   * log is the last place left, as at close(). Was: held in memory for as long as the disk stayed
   * full, until the process ran out of it and every queued record was lost with it. The newest
   * goes, taken from the tail: a write in flight holds the head.
   */
  private setAside(record: CostRecord): void {
    this.log(`[tollgate] error: cost record ${record.requestId} could not be written (the store is failing: ${this.lastFailure}) and ${this.maxQueued} records already wait in memory; set aside: ${JSON.stringify(record)}`);
  }

  /**
   * The newer half of the queue goes to `keepUnwritten`, in one file. Taken from the tail: a write
   * in flight holds the head (and takes it off the queue when it succeeds). Records it cannot
   * keep go back on the queue: never dropped.
   */
  private keepOverflow(): void {
    const overflow = this.queue.splice(Math.floor(this.maxQueued / 2));
    this.beingKept += overflow.length;
    this.keeping = (async () => {
      try {
        const where = await this.keepUnwritten!(overflow);
        this.log(`[tollgate] error: the cost record store is down; ${overflow.length} records past the ${this.maxQueued} held in memory were kept in ${where}, written once it is back`);
      } catch (error) {
        this.log(`[tollgate] error: ${overflow.length} cost records could not be kept (${(error as Error).message}); held in memory`);
        this.queue.push(...overflow);
        this.keepPausedUntil = Date.now() + KEEP_RETRY_MS;
      } finally {
        this.beingKept -= overflow.length;
      }
    })();
  }

  /** One flush pending at a time; a retry timer, when set, is the pending one. */
  private schedule(): void {
    if (this.scheduled || this.retryTimer) return;
    this.scheduled = true;
    this.scheduleFlush(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** A day's aggregates, for cost reports; undefined where the store keeps none (Workers). */
  get totals(): ((day: string) => Promise<AggregateEntry[]>) | undefined {
    const store = this.store;
    return store.totals && ((day) => store.totals!(day));
  }

  /** Records waiting to be written (for health checks and tests); not those already kept elsewhere. */
  get pending(): number {
    return this.queue.length + this.beingKept;
  }

  /** The last write failed and is being retried: the store is down or refusing writes. */
  get failing(): boolean {
    return this.failures > 0;
  }

  /** Writes everything queued; resolves when the queue is empty or a write failed (a retry is then scheduled). */
  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
      // A record queued while the last write was finishing still needs its own flush. Not while
      // closing: close() tries again every retryDelayMs, and a flush here on the next turn made a
      // store that refuses at once (Redis away) a hot loop of failed writes until the deadline.
      if (this.queue.length > 0 && !this.closing) this.schedule();
    });
    return this.flushing;
  }

  /**
   * Flushes, retrying until `deadlineMs` has passed, then closes the store. Resolves to how many
   * records were lost: neither written nor kept (each loss is also logged).
   */
  async close(deadlineMs = 5000): Promise<{ lost: number }> {
    this.closing = true;
    const giveUpAt = Date.now() + deadlineMs;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    while (this.queue.length > 0 && Date.now() < giveUpAt) {
      await this.flush();
      if (this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryDelayMs, giveUpAt - Date.now())));
    }
    clearTimeout(this.retryTimer);
    await this.keeping;
    const lost = this.queue.length > 0 ? await this.keepQueue() : 0;
    await this.store.close();
    return { lost };
  }

  /** Keeps what is still queued; resolves to how many records could not be kept. */
  private async keepQueue(): Promise<number> {
    const count = this.queue.length;
    try {
      if (!this.keepUnwritten) throw new Error("nowhere to keep them");
      const where = await this.keepUnwritten(this.queue.splice(0));
      this.log(`[tollgate] error: ${count} cost records could not be written before shutdown; kept in ${where}, written at the next start`);
      return 0;
    } catch (error) {
      // The log is the last place left (it usually goes to a collector off this disk): each record
      // whole, so finance can add it by hand. Was: only the count, and what they were was gone.
      const why = (error as Error).message;
      for (const record of this.queue.splice(0)) this.log(`[tollgate] error: cost record ${record.requestId} could not be written before shutdown, nor kept (${why}); set aside: ${JSON.stringify(record)}`);
      this.log(`[tollgate] error: ${count} cost records could not be written before shutdown, nor kept (${why}); each is in a log line above, whole`);
      return count;
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.maxBatch);
      try {
        await this.store.write(batch);
      } catch (error) {
        if (error instanceof UnwritableRecords) {
          // The rest of the batch is written; these never will be. The log keeps them whole.
          for (const line of error.logLines()) this.log(line);
          this.queue.splice(0, batch.length);
          continue;
        }
        this.failures += 1;
        this.lastFailure = (error as Error).message;
        clearTimeout(this.retryTimer);
        if (this.closing) {
          // close() retries on its own clock, every retryDelayMs until its deadline: said once,
          // not once a try.
          if (!this.failedWhileClosing) this.log(`[tollgate] error: writing ${batch.length} cost records failed while stopping (${(error as Error).message}); trying again every ${this.retryDelayMs} ms until the stop's deadline, ${this.queue.length} queued`);
          this.failedWhileClosing = true;
          return;
        }
        const delay = Math.min(this.retryDelayMs * 2 ** (this.failures - 1), this.maxRetryDelayMs);
        this.log(`[tollgate] error: writing ${batch.length} cost records failed (${(error as Error).message}); retrying in ${delay} ms, ${this.queue.length} queued`);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          void this.flush();
        }, delay);
        return;
      }
      // Only now are they off the queue: a write that failed leaves them where they were.
      this.queue.splice(0, batch.length);
      this.failures = 0;
    }
  }
}
