import { hasBudgets, hasRateLimits } from "./budgets/budget-config.ts";
import type { ResolvedConfig } from "./config/resolve-config.ts";
import { COST_RECORD_LOG_TYPE } from "./ledger/log-ledger-store.ts";

// What the Workers entry cannot promise, said once per isolate in the Worker's log. On Workers the
// budget store is the isolate's memory (ioredis does not exist there), and Cloudflare runs many
// isolates, each evicted when it pleases. A platform team must hear that before it relies on a
// budget there, not find it on an invoice. Cost records go to the Worker's log, and it says where.

export function workerWarnings(config: ResolvedConfig): string[] {
  const warnings = config.warnings.map((warning) => `[tollgate] warning: ${warning}`);
  if (config.store?.redisUrl) {
    warnings.push("[tollgate] warning: store.redisUrl is not used on Workers; budgets and rate limits stay in this isolate's memory, cost records go to the Worker's log");
  }
  if (hasBudgets(config) || hasRateLimits(config)) {
    warnings.push(
      "[tollgate] warning: on Workers, budgets and rate limits are enforced per isolate: several isolates together can spend past a limit. Run the Node server with Redis where a budget must hold",
    );
  }
  warnings.push(
    `[tollgate] note: on Workers, each cost record is one JSON line in the Worker's log ({"type":"${COST_RECORD_LOG_TYPE}","record":{…}}); keep them with Workers Logs or Logpush`,
  );
  return warnings;
}
