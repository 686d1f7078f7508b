// One body that both SDKs read: OpenAI's `{object: "list", data: [{id, object: "model", …}]}` and
// Anthropic's `{data: [{id, type: "model", display_name, created_at}], has_more, first_id, last_id}`.
// Each route a key may use is a model to its clients.
export function renderModelList(routes: string[]) {
  return {
    object: "list",
    data: routes.map(renderModel),
    has_more: false,
    first_id: routes[0] ?? null,
    last_id: routes.at(-1) ?? null,
  };
}

/** One route as a model, as both SDKs' `models.retrieve(id)` read it (and as each list item). */
export function renderModel(id: string) {
  return {
    id,
    object: "model",
    created: 0,
    owned_by: "tollgate",
    type: "model",
    display_name: id,
    created_at: "1970-01-01T00:00:00Z",
  };
}
