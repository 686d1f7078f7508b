import type { ChatRequest } from "../src/model/chat-request.ts";
import type { ProviderType } from "../src/model/chat-model.ts";
import type { TokenCounter } from "../src/metering/token-counter.ts";
import type { KeyValueStore } from "../src/store/key-value-store.ts";

// A policy changes a request on its way to the provider and says what it changed. Two moments:
// `apply` once per request, before routing (what the route wants), and `adaptToTarget` once per
// upstream attempt (what that provider and model accept; a fallback target may differ). Policies
// never mutate the request they get: they return a new one, so the client's request stays as sent.

export type PolicyTarget = { providerName: string; providerType: ProviderType; model: string };

/**
 * What the policies did: `notes` go to the record's `policies` and the `x-tollgate-policies`
 * header (e.g. `max_tokens=clamped:8000->1024`); `warnings` are things dropped or trimmed
 * that the client may want to know about.
 */
export type PolicyLog = { notes: string[]; warnings: string[] };

export type PolicyContext = {
  route: string;
  /** The caller's team (undefined: the admin key): what a policy learns from requests stays within it. */
  team: string | undefined;
  store: KeyValueStore;
  counter: TokenCounter;
  /**
   * This request's own memory across its targets: `adaptToTarget` runs once per call the route
   * makes, and what must happen once per request (a sighting counted) is kept here.
   */
  perRequest?: Map<string, unknown>;
  /**
   * The request is only counted (count_tokens), never sent: shape it as for a call, but change no
   * shared state (no prefix sighting is counted).
   */
  countOnly?: boolean;
};

export interface Policy {
  readonly name: string;
  apply?(request: ChatRequest, log: PolicyLog, context: PolicyContext): ChatRequest | Promise<ChatRequest>;
  adaptToTarget?(request: ChatRequest, target: PolicyTarget, log: PolicyLog, context: PolicyContext): ChatRequest | Promise<ChatRequest>;
}

export const emptyLog = (): PolicyLog => ({ notes: [], warnings: [] });
