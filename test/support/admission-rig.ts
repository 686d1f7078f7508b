// What the budget tests share: a config of their routes on the bundled prices, with one key, and
// an Admission over a store to admit its requests against.
import { Admission } from "../../src/budgets/admission.ts";
import type { AdmissionStore } from "../../src/budgets/admission-store.ts";
import { MemoryAdmissionStore } from "../../src/budgets/memory-admission-store.ts";
import { resolveConfig, type ResolvedConfig } from "../../src/config/resolve-config.ts";
import { PriceBook } from "../../src/metering/price-book.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";

const PROVIDERS = { openai: { type: "openai", apiKey: { env: "K" } }, anthropic: { type: "anthropic", apiKey: { env: "K" } } };

/** `routes` on an OpenAI and an Anthropic provider, and one key: "app" of team "search"; `server` settings where given. */
export function budgetedConfig(routes: Record<string, unknown>, server?: Record<string, unknown>): ResolvedConfig {
  return resolveConfig({ providers: PROVIDERS, routes, keys: [{ id: "app", team: "search", hash: `sha256:${"a".repeat(64)}` }], ...(server ? { server } : {}) }, { K: "sk" });
}

/** "hi" on `route` (18 tokens by the byte bound: 2 bytes, 8 for the message, 8 for the request). */
export function hiRequest(route: string, fields: Partial<ChatRequest> = {}): ChatRequest {
  return { route, stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], ...fields };
}

/** An Admission for `config`, and `admit` as its key (`id` defaults to one per call). */
export function admissionFor(config: ResolvedConfig, { store = new MemoryAdmissionStore(), now }: { store?: AdmissionStore; now?: () => number } = {}) {
  const admission = new Admission({ config, store, prices: new PriceBook(config.providers), ...(now ? { now } : {}) });
  let admitted = 0;
  const admit = (request: ChatRequest, requestId = `req_${++admitted}`) =>
    admission.admit({ requestId, caller: { kind: "key", key: config.keys[0]! }, routeName: request.route, route: config.routes[request.route]!, request });
  return { admission, admit };
}
