import { mayUseRoute, type Caller } from "../auth/authenticate.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Admission, BudgetScope } from "../budgets/admission.ts";
import type { AdmissionStore } from "../budgets/admission-store.ts";
import { windowKey, windowOf } from "../budgets/budget-window.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { nanoToUsd, usdToNano } from "../pricing/format-usd.ts";

// GET /v1/budgets: the caller's scopes (its key, its team, the routes it may use) with what is
// left in each current window; the admin key sees every scope in the config.

export async function renderBudgets(config: ResolvedConfig, admission: Admission, store: AdmissionStore, caller: Caller, now: number) {
  const scopes = new Map<string, BudgetScope>();
  const callers: Caller[] = caller.kind === "admin" ? config.keys.map((key) => ({ kind: "key", key })) : [caller];
  for (const each of callers) {
    for (const route of Object.keys(config.routes)) {
      if (!mayUseRoute(each, route)) continue;
      for (const scope of admission.scopesFor(each, route)) scopes.set(scope.scope, scope);
    }
  }
  if (caller.kind === "admin") {
    // Every scope in the config, including a route no key may use yet (and all of them when
    // there are no keys at all), and a key that may use no route: the keys' view above only finds
    // what some key can reach.
    for (const [route, settings] of Object.entries(config.routes)) if (settings.budget) scopes.set(`route:${route}`, { scope: `route:${route}`, budget: settings.budget });
    for (const [team, settings] of Object.entries(config.teams ?? {})) if (settings.budget) scopes.set(`team:${team}`, { scope: `team:${team}`, budget: settings.budget });
    for (const key of config.keys) if (key.budget) scopes.set(`key:${key.id}`, { scope: `key:${key.id}`, budget: key.budget });
  }
  const listed = [...scopes.values()].sort((a, b) => a.scope.localeCompare(b.scope));
  const windows = listed.map(({ budget }) => windowOf(budget, now));
  const levels = await store.levels(listed.map(({ scope }, index) => windowKey(scope, windows[index]!)), now).catch((error: Error) => {
    // The store's outage, as admission reports it: not a tollgate bug (500).
    throw new GatewayError("unavailable", "the budget store is unreachable; budgets cannot be read until it is back", { code: "budget_store_unavailable", retryAfterSeconds: 1, cause: error });
  });
  return {
    scopes: listed.map(({ scope, budget }, index) => {
      const level = levels[index]!;
      const limitNano = usdToNano(budget.usd);
      return {
        scope,
        limitUsd: budget.usd,
        spentUsd: nanoToUsd(level.spentNano),
        reservedUsd: nanoToUsd(level.reservedNano),
        remainingUsd: nanoToUsd(limitNano - level.spentNano - level.reservedNano),
        window: budget.window,
        resetsAt: windows[index]!.resetsAt?.toISOString().replace(".000Z", "Z") ?? null,
        mode: budget.mode,
      };
    }),
  };
}
