import type { AdmissionStore } from "./admission-store.ts";

// Keeps the reservations of requests still in flight from expiring. A reservation's time to live
// then only has to outlast a dead gateway's last renewal, not the longest request: a stream may
// run for half an hour and still hold its worst case, while the holds of a gateway that crashed
// free themselves within one TTL. Without renewal a long stream would lose its reservation half-way
// and let other requests spend the budget it still needs.
//
// Each hold is renewed when a third of its TTL has passed, so two renewals can fail or run late
// before it expires. One timer serves every hold, and the holds due together go to the store in
// one call.

type Hold = { ttlMs: number; renewAt: number };

export class ReservationKeeper {
  private readonly holds = new Map<string, Hold>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = Infinity;
  private renewing = false;

  constructor(
    private readonly store: Pick<AdmissionStore, "extend">,
    private readonly now: () => number,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Starts renewing a reservation that was just made with this TTL. */
  hold(requestId: string, ttlMs: number): void {
    const renewAt = this.now() + ttlMs / 3;
    this.holds.set(requestId, { ttlMs, renewAt });
    this.wakeAt(renewAt);
  }

  /** The request is settling: its reservation is about to be replaced by its cost. */
  release(requestId: string): void {
    this.holds.delete(requestId);
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
    this.timer = setTimeout(() => void this.renewDue(), Math.max(0, at - this.now()));
    // In-flight requests keep the process alive; their renewals alone must not.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async renewDue(): Promise<void> {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    this.renewing = true;
    try {
      const now = this.now();
      const dueByTtl = new Map<number, string[]>();
      for (const [requestId, hold] of this.holds) {
        if (hold.renewAt > now) continue;
        const ids = dueByTtl.get(hold.ttlMs);
        if (ids) ids.push(requestId);
        else dueByTtl.set(hold.ttlMs, [requestId]);
      }
      for (const [ttlMs, requestIds] of dueByTtl) {
        let nextAt = now + ttlMs / 3;
        try {
          await this.store.extend(requestIds, now + ttlMs);
        } catch (error) {
          // Try again soon: the reservation still has two thirds of its TTL to go.
          nextAt = now + Math.min(1_000, ttlMs / 3);
          this.log(`[tollgate] warning: renewing ${requestIds.length} budget reservations failed (${(error as Error).message}); retrying`);
        }
        for (const requestId of requestIds) {
          const hold = this.holds.get(requestId);
          if (hold) hold.renewAt = nextAt;
        }
      }
    } finally {
      this.renewing = false;
    }
    let next = Infinity;
    for (const hold of this.holds.values()) next = Math.min(next, hold.renewAt);
    if (next < Infinity) this.wakeAt(next);
  }
}
