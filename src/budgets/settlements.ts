import { unrefTimer } from "../runtime/unref-timer.ts";
import type { AdmissionStore, SettlePlan } from "./admission-store.ts";

// Settling a reservation with what the request actually cost, until the store takes it.
// Settling is idempotent by request id, so a retry after a lost reply cannot count twice; giving
// up would leave real spend off the budget (the reservation expires on its own, and later requests
// would spend the same money again). So it retries until the store is back, as the ledger does:
// 100 ms doubling, then every 30 s.

/** A failed settle is retried 100 ms doubling up to this delay, for as long as it takes. */
const MAX_SETTLE_RETRY_DELAY_MS = 30_000;
/** About 25 s of failures (100 ms doubling) before the log says so. */
const SETTLE_RETRIES_BEFORE_WARNING = 8;

export class Settlements {
  /** Settlements not yet through (the store is away): finished or handed over at shutdown. */
  private readonly pending = new Map<string, SettlePlan>();
  private closed = false;

  constructor(
    private readonly store: AdmissionStore,
    private readonly log: ((line: string) => void) | undefined,
  ) {}

  async settleUntilDone(plan: SettlePlan): Promise<void> {
    // Tracked from its first attempt: one still waiting on the store at shutdown is tried (or
    // kept) by finish() too; settling twice counts once.
    this.pending.set(plan.requestId, plan);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.settle(plan);
        this.pending.delete(plan.requestId);
        return;
      } catch (error) {
        // Shutting down: finish() hands what is left to the host, which keeps it.
        if (this.closed) return;
        if (attempt === SETTLE_RETRIES_BEFORE_WARNING) this.log?.(`[tollgate] error: settling ${plan.requestId} keeps failing (${(error as Error).message}); retrying until the budget store is back`);
        // Unref'd: a gateway shutting down during an outage does not wait for it.
        await new Promise((resolve) => unrefTimer(setTimeout(resolve, Math.min(100 * 2 ** attempt, MAX_SETTLE_RETRY_DELAY_MS))));
        if (this.closed) return;
      }
    }
  }

  /**
   * At shutdown: tries each settlement still retrying once more, now (the store may be back since
   * its last attempt, which may be 30 s away), and returns those that still failed, for the host
   * to keep (unwritten-records.ts). Retrying stops: the process is going away.
   */
  async finish(): Promise<SettlePlan[]> {
    this.closed = true;
    // All at once: one after another, a partitioned store held each for its command timeout
    // (2 s), and a dozen of them outlasted the process's stop deadline before the records that
    // come after them were written or kept.
    const plans = [...this.pending.values()];
    this.pending.clear();
    const results = await Promise.allSettled(plans.map((plan) => this.store.settle(plan)));
    return plans.filter((_, index) => results[index]!.status === "rejected");
  }
}
