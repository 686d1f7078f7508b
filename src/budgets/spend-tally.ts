import type { VirtualKeyConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { LedgerFollower } from "../ledger/ledger-checkpoint.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { BudgetConfig } from "./budget-config.ts";
import { windowKey, windowOf } from "./budget-window.ts";

/** A window's spend in a checkpoint: [its store key, nano-dollars, when it resets (ms) or null]. */
type SpendState = [key: string, nano: number, resetsAt: number | null][];

/**
 * The spend already on record, per budget scope and window, from the embedded ledger's records:
 * without Redis, budgets live in memory, and this is what keeps a restart from resetting them.
 * It follows the ledger while the gateway runs too, so the checkpoint a clean stop leaves holds it.
 */
export class SpendTally implements LedgerFollower {
  readonly totals = new Map<string, number>();
  /** When each window in `totals` ends (null: a `total` budget's, never). */
  private readonly resets = new Map<string, number | null>();
  private readonly keys: Map<string, VirtualKeyConfig>;
  readonly checkpoint: NonNullable<LedgerFollower["checkpoint"]>;

  constructor(
    private readonly config: ResolvedConfig,
    /** When the gateway starts: windows that ended before it are not kept (nothing counts in them). */
    private readonly now = Date.now(),
  ) {
    this.keys = new Map(config.keys.map((key) => [key.id, key]));
    this.checkpoint = {
      fingerprint: this.fingerprint(),
      snapshot: (): SpendState => [...this.totals].map(([key, nano]) => [key, nano, this.resets.get(key) ?? null]),
      restore: (state) => {
        for (const [key, nano, resetsAt] of state as SpendState) {
          if (resetsAt !== null && resetsAt <= this.now) continue;
          this.totals.set(key, nano);
          this.resets.set(key, resetsAt);
        }
      },
    };
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
    const resetsAt = window.resetsAt?.getTime() ?? null;
    // A year of ledger would otherwise leave a level per scope per past day in memory for good.
    if (resetsAt !== null && resetsAt <= this.now) return;
    const key = windowKey(scope, window);
    // A new window began: those that ended by this record's time go, or a running gateway would
    // keep every past day of every budgeted scope (and write them into each checkpoint) for good.
    if (!this.totals.has(key)) this.dropEnded(Date.parse(record.time));
    this.totals.set(key, (this.totals.get(key) ?? 0) + record.cost.totalNano);
    this.resets.set(key, resetsAt);
  }

  private dropEnded(at: number): void {
    for (const [key, resetsAt] of this.resets) {
      if (resetsAt === null || resetsAt > at) continue;
      this.resets.delete(key);
      this.totals.delete(key);
    }
  }

  /**
   * What decides where a record's cost goes: which scopes have budgets, and their windows and
   * time zones (not their limits, which change no spend).
   */
  private fingerprint(): string {
    const windows: string[] = [];
    const add = (scope: string, budget: BudgetConfig | undefined) => budget && windows.push(JSON.stringify([scope, budget.window, budget.timeZone ?? null]));
    for (const [name, route] of Object.entries(this.config.routes)) add(`route:${name}`, route.budget);
    for (const key of this.config.keys) add(`key:${key.id}`, key.budget);
    for (const [name, team] of Object.entries(this.config.teams ?? {})) add(`team:${name}`, team.budget);
    return windows.sort().join("\n");
  }
}
