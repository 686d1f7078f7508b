import { hasBudgets, hasRateLimits } from "./budgets/budget-config.ts";
import type { ResolvedConfig } from "./config/resolve-config.ts";

// What the Workers entry cannot promise, said once per isolate in the Worker's log. On Workers the
// budget store and the ledger are the isolate's memory (ioredis and files do not exist there), and
// Cloudflare runs many isolates, each evicted when it pleases. A platform team must hear that
// before it relies on a budget there, not find it on an invoice.

export function workerWarnings(config: ResolvedConfig): string[] {
  const warnings = config.warnings.map((warning) => `[tollgate] warning: ${warning}`);
  if (config.store?.redisUrl) {
    warnings.push("[tollgate] warning: store.redisUrl is not used on Workers; budgets, rate limits and cost records stay in this isolate's memory");
  }
  if (hasBudgets(config) || hasRateLimits(config)) {
    warnings.push(
      "[tollgate] warning: on Workers, budgets and rate limits are enforced per isolate: several isolates together can spend past a limit. Run the Node server with Redis where a budget must hold",
    );
  }
  warnings.push("[tollgate] warning: on Workers, cost records live in this isolate's memory and are lost when it is evicted; the response headers and the stream's final event still carry each request's cost");
  return warnings;
}
