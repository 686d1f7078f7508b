import type { Config, ProviderConfig } from "./config-schema.ts";
import { findModelRetirement } from "../pricing/find-model-price.ts";

// A retired model answers every request with an error (Anthropic: 404 not_found_error). A route
// whose only target is one stops working on that day, one with fallbacks pays a failed call per
// request. The gateway knows the days from its bundled list, so it says so at start-up, naming
// the route, rather than leaving the provider's SDK to print a deprecation line on every call.

const DAY_MS = 86_400_000;

export function retirementWarnings(routes: Config["routes"], providers: Record<string, ProviderConfig>, now: number): string[] {
  const today = Math.floor(now / DAY_MS);
  const warnings: string[] = [];
  for (const [routeName, route] of Object.entries(routes)) {
    route.targets.forEach((target, index) => {
      const provider = providers[target.provider];
      if (!provider) return;
      const retirement = findModelRetirement(provider.type, target.model);
      if (!retirement) return;
      const day = Date.parse(`${retirement.on}T00:00:00Z`) / DAY_MS;
      const where = `routes.${routeName}: ${target.model} on provider "${target.provider}"`;
      // A "fallback" route moves on in the order written; a "cheapest" one in its own order.
      const others = route.strategy === "cheapest" ? route.targets.length - 1 : route.targets.length - 1 - index;
      const after = others > 0 ? "the route falls back to another target on each request" : route.targets.length > 1 ? "it is the route's last target" : "the route has no other target";
      warnings.push(
        day <= today
          ? `${where} was retired on ${retirement.on}: its requests fail there, and ${after}; move the route to a current model (${retirement.source})`
          : `${where} is retired on ${retirement.on} (in ${plural(day - today, "day")}): from then on its requests fail; move the route to a current model before then (${retirement.source})`,
      );
    });
  }
  return warnings;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
