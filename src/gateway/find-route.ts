import { mayUseRoute, type Caller } from "../auth/authenticate.ts";
import type { RouteConfig } from "../config/config-schema.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";

/** The route a request names in `model`: 404 when there is none, 403 when this caller may not use it. */
export function findRoute(config: ResolvedConfig, caller: Caller, name: string): RouteConfig {
  // Own keys only: `model: "constructor"` must not find Object.prototype's.
  const route = Object.hasOwn(config.routes, name) ? config.routes[name] : undefined;
  if (route && mayUseRoute(caller, name)) return route;
  const allowed = Object.keys(config.routes).filter((routeName) => mayUseRoute(caller, routeName));
  if (route) throw new GatewayError("permission", `this key may not use route "${name}"; it may use: ${allowed.join(", ") || "none"}`, { param: "model" });
  throw new GatewayError("not_found", `unknown route "${name}": set model to one of ${allowed.join(", ") || "(no routes)"}`, { param: "model" });
}
