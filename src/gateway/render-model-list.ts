import { GatewayError } from "../errors/gateway-error.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { findModelLimits } from "../pricing/find-model-price.ts";

// One body that both SDKs read: OpenAI's `{object: "list", data: [{id, object: "model", …}]}` and
// Anthropic's `{data: [{id, type: "model", display_name, created_at, …}], has_more, first_id,
// last_id}`. Each route a key may use is a model to its clients.

/** Anthropic's paging (`limit`, `after_id`, `before_id`); without them, every route at once, as OpenAI lists. */
export type ModelPage = { limit?: string | undefined; afterId?: string | undefined; beforeId?: string | undefined };

export function renderModelList(config: ResolvedConfig, routes: string[], page: ModelPage = {}) {
  const { items, hasMore } = pageOf(routes, page);
  return {
    object: "list",
    data: items.map((route) => renderModel(config, route)),
    has_more: hasMore,
    first_id: items[0] ?? null,
    last_id: items.at(-1) ?? null,
  };
}

/**
 * One route as a model, as both SDKs' `models.retrieve(id)` read it (and as each list item).
 * Anthropic's ModelInfo fields a route has no value for are null, as its SDK types them; its
 * `max_tokens` is the least that any of the route's targets can answer, where all are known.
 */
export function renderModel(config: ResolvedConfig, id: string) {
  return {
    id,
    object: "model",
    created: 0,
    owned_by: "tollgate",
    type: "model",
    display_name: id,
    created_at: "1970-01-01T00:00:00Z",
    max_tokens: leastMaxOutput(config, id),
    max_input_tokens: null,
    capabilities: null,
    line: null,
    lifecycle: "active",
    deprecated_at: null,
    retires_at: null,
  };
}

function leastMaxOutput(config: ResolvedConfig, route: string): number | null {
  const limits = (config.routes[route]?.targets ?? []).map((target) => {
    const type = config.providers[target.provider]?.type;
    return type ? findModelLimits(type, target.model).maxOutputTokens : undefined;
  });
  return limits.length > 0 && limits.every((limit) => limit !== undefined) ? Math.min(...(limits as number[])) : null;
}

function pageOf(routes: string[], { limit, afterId, beforeId }: ModelPage): { items: string[]; hasMore: boolean } {
  let size = routes.length;
  if (limit !== undefined) {
    size = Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > 1000) throw new GatewayError("invalid_request", `limit must be a whole number from 1 to 1000, got "${limit}"`, { param: "limit" });
  }
  const at = (id: string, param: string) => {
    const index = routes.indexOf(id);
    if (index === -1) throw new GatewayError("invalid_request", `${param} "${id}" is not a model in this list: give an id from a page before`, { param });
    return index;
  };
  if (afterId !== undefined) {
    const start = at(afterId, "after_id") + 1;
    return { items: routes.slice(start, start + size), hasMore: start + size < routes.length };
  }
  if (beforeId !== undefined) {
    const end = at(beforeId, "before_id");
    const start = Math.max(0, end - size);
    return { items: routes.slice(start, end), hasMore: start > 0 };
  }
  return { items: routes.slice(0, size), hasMore: size < routes.length };
}
