import type { VirtualKeyConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { BudgetConfig } from "./budget-config.ts";
import { windowKey, windowOf } from "./budget-window.ts";

/**
 * The spend already on record, per budget scope and window, from the embedded ledger's records:
 * without Redis, budgets live in memory, and this is what keeps a restart from resetting them.
 */
export class SpendTally {
  readonly totals = new Map<string, number>();
  private readonly keys: Map<string, VirtualKeyConfig>;

  constructor(
    private readonly config: ResolvedConfig,
    /** When the gateway starts: windows that ended before it are not kept (nothing counts in them). */
    private readonly now = Date.now(),
  ) {
    this.keys = new Map(config.keys.map((key) => [key.id, key]));
  }

  add(record: CostRecord): void {
    if (record.cost.totalNano === 0) return;
    this.charge(`route:${record.route}`, this.config.routes[record.route]?.budget, record);
    // As admission does: the admin key has no key or team scope (its record's names are not a key's).
    if (record.admin) return;
    this.charge(`key:${record.keyId}`, this.keys.get(record.keyId)?.budget, record);
    this.charge(`team:${record.team}`, this.config.teams?.[record.team]?.budget, record);
  }

  private charge(scope: string, budget: BudgetConfig | undefined, record: CostRecord): void {
    if (!budget) return;
    const window = windowOf(budget, Date.parse(record.time));
    // A year of ledger would otherwise leave a level per scope per past day in memory for good.
    if (window.resetsAt !== null && window.resetsAt.getTime() <= this.now) return;
    const key = windowKey(scope, window);
    this.totals.set(key, (this.totals.get(key) ?? 0) + record.cost.totalNano);
  }
}
