import { timersOutliveRequests } from "../runtime/shared-timers.ts";
import { unrefTimer } from "../runtime/unref-timer.ts";
import type { AdmissionStore } from "./admission-store.ts";

// Keeps the reservations of requests still in flight from expiring. A reservation's time to live
// then only has to outlast a dead gateway's last renewal, not the longest request: a stream may
// run for half an hour and still hold its worst case, while the holds of a gateway that crashed
// free themselves within one TTL. Without renewal a long stream would lose its reservation half-way
// and let other requests spend the budget it still needs.
//
// Each hold is renewed when a third of the TTL has passed, so two renewals can fail or run late
// before it expires. One timer serves every hold, and the holds due together go to the store in
// one call. On Workers, where a timer dies with the request that made it (shared-timers.ts),
// each hold has a timer of its own, made by its own request.

export class ReservationKeeper {
  /** Request id → when its reservation is next renewed. */
  private readonly holds = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = Infinity;
  private renewing = false;
  /** Workers: each hold's own timer. */
  private readonly ownTimers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly store: Pick<AdmissionStore, "extend">,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Starts renewing a reservation that was just made. */
  hold(requestId: string): void {
    const renewAt = this.now() + this.ttlMs / 3;
    this.holds.set(requestId, renewAt);
    if (timersOutliveRequests) this.wakeAt(renewAt);
    else this.renewOwnIn(requestId, this.ttlMs / 3);
  }

  /** The request is settling: its reservation is about to be replaced by its cost. */
  release(requestId: string): void {
    this.holds.delete(requestId);
    clearTimeout(this.ownTimers.get(requestId));
    this.ownTimers.delete(requestId);
  }

  /** Workers: renews one hold from a timer its own request made, then the next time, until released. */
  private renewOwnIn(requestId: string, delayMs: number): void {
    this.ownTimers.set(
      requestId,
      setTimeout(() => void this.renewOwn(requestId).catch(() => undefined), delayMs),
    );
  }

  private async renewOwn(requestId: string): Promise<void> {
    if (!this.holds.has(requestId)) return;
    let nextInMs = this.ttlMs / 3;
    try {
      await this.store.extend([requestId], this.now() + this.ttlMs);
    } catch (error) {
      nextInMs = Math.min(1_000, this.ttlMs / 3);
      this.warn(`renewing a budget reservation failed (${messageOf(error)}); retrying`);
    }
    if (this.holds.has(requestId)) this.renewOwnIn(requestId, nextInMs);
  }

  /** A log line that cannot stop the renewals, whatever the log does. */
  private warn(message: string): void {
    try {
      this.log(`[tollgate] warning: ${message}`);
    } catch {
      // the renewals matter more than the line
    }
  }

  /** Requests whose reservations are being kept (for tests and health checks). */
  get size(): number {
    return this.holds.size;
  }

  private wakeAt(at: number): void {
    // A renewal in progress schedules the next one itself when it is done.
    if (this.renewing || (this.timer && this.timerDueAt <= at)) return;
    clearTimeout(this.timer);
    this.timerDueAt = at;
    // In-flight requests keep the process alive; their renewals alone must not.
    this.timer = unrefTimer(setTimeout(() => void this.renewDue(), Math.max(0, at - this.now())));
  }

  private async renewDue(): Promise<void> {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    this.renewing = true;
    const now = this.now();
    const due = [...this.holds].filter(([, renewAt]) => renewAt <= now).map(([requestId]) => requestId);
    let nextAt = now + this.ttlMs / 3;
    try {
      if (due.length > 0) await this.store.extend(due, now + this.ttlMs);
    } catch (error) {
      // Try again soon: the reservations still have two thirds of their TTL to go.
      nextAt = now + Math.min(1_000, this.ttlMs / 3);
      this.warn(`renewing ${due.length} budget reservations failed (${messageOf(error)}); retrying`);
    } finally {
      this.renewing = false;
    }
    for (const requestId of due) if (this.holds.has(requestId)) this.holds.set(requestId, nextAt);
    let next = Infinity;
    for (const renewAt of this.holds.values()) next = Math.min(next, renewAt);
    if (next < Infinity) this.wakeAt(next);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
