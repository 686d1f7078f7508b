import { hasBudgets, hasRateLimits } from "./budgets/budget-config.ts";
import type { ResolvedConfig } from "./config/resolve-config.ts";
import { COST_RECORD_LOG_TYPE } from "./ledger/log-ledger-store.ts";

// What the Workers entry cannot promise, said once per isolate in the Worker's log. Without the
// TOLLGATE_BUDGETS Durable Object the budget store is the isolate's memory (ioredis does not exist
// there), and Cloudflare runs many isolates, each evicted when it pleases. A platform team must
// hear that before it relies on a budget there, not find it on an invoice. Cost records go to the
// Worker's log, and it says where.

export function workerWarnings(config: ResolvedConfig, { sharedBudgets }: { sharedBudgets: boolean }): string[] {
  const warnings = config.warnings.map((warning) => `[tollgate] warning: ${warning}`);
  if (config.store?.redisUrl) {
    const budgets = sharedBudgets ? "budgets and rate limits live in the TOLLGATE_BUDGETS Durable Object" : "budgets and rate limits stay in this isolate's memory";
    warnings.push(`[tollgate] warning: store.redisUrl is not used on Workers; ${budgets}, cost records go to the Worker's log`);
  }
  if (!sharedBudgets && (hasBudgets(config) || hasRateLimits(config))) {
    warnings.push(
      "[tollgate] warning: on Workers without the TOLLGATE_BUDGETS Durable Object binding, budgets and rate limits are enforced per isolate: several isolates together can spend past a limit. Bind it (see wrangler.toml) where a budget must hold",
    );
  }
  warnings.push(
    `[tollgate] note: on Workers, each cost record is one JSON line in the Worker's log ({"type":"${COST_RECORD_LOG_TYPE}","record":{…}}); keep them with Workers Logs or Logpush`,
  );
  return warnings;
}
