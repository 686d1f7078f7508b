import type { ResolvedConfig } from "../config/resolve-config.ts";
import type { CostRecord } from "../metering/cost-record.ts";
import type { BudgetConfig } from "./budget-config.ts";
import { windowOf } from "./budget-window.ts";

/**
 * The spend already on record, per budget scope and window, from the embedded ledger's records:
 * without Redis, budgets live in memory, and this is what keeps a restart from resetting them.
 */
export function spendFromRecords(config: ResolvedConfig, records: Iterable<CostRecord>): Map<string, number> {
  const spent = new Map<string, number>();
  const keys = new Map(config.keys.map((key) => [key.id, key]));
  const add = (scope: string, budget: BudgetConfig | undefined, record: CostRecord) => {
    if (!budget || record.cost.totalNano === 0) return;
    const key = `${scope}|${windowOf(budget, Date.parse(record.time)).id}`;
    spent.set(key, (spent.get(key) ?? 0) + record.cost.totalNano);
  };
  for (const record of records) {
    add(`route:${record.route}`, config.routes[record.route]?.budget, record);
    add(`key:${record.keyId}`, keys.get(record.keyId)?.budget, record);
    add(`team:${record.team}`, config.teams?.[record.team]?.budget, record);
  }
  return spent;
}
