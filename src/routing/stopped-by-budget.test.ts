import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ProviderSlot } from "./create-chat-models.ts";
import { generateOnRoute, type RouteObserver } from "./route-chat.ts";

// A route stopped before its next target (a hard budget that cannot also pay for a billed failed
// call) used to throw the last failure as it was: without the route's other failures beside it,
// and claiming "do not retry" even where an earlier target's failure may pass next time.

const config = resolveConfig(
  {
    providers: { a: { type: "openai", apiKey: { env: "K" } }, b: { type: "openai", apiKey: { env: "K" } }, c: { type: "openai", apiKey: { env: "K" } } },
    routes: { r: { targets: [{ provider: "a", model: "gpt-4o" }, { provider: "b", model: "gpt-4o-mini" }, { provider: "c", model: "gpt-4.1" }] } },
  },
  { K: "sk-test" },
);
const request: ChatRequest = { route: "r", stream: false, streamUsage: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };

const failing = (name: string, error: GatewayError): ChatModel => ({
  providerName: name,
  providerType: "openai",
  baseUrl: `http://${name}.invalid`,
  generate: async () => {
    throw error;
  },
  stream: async function* () {},
});

describe("a route stopped by its budget before the next target", () => {
  it("tells the failure that may pass with the other beside it, and not 'do not retry'", async () => {
    const overloaded = new GatewayError("unavailable", 'provider "a" is overloaded', { retryable: true });
    const refused = new GatewayError("upstream", 'provider "b" rejected tollgate\'s credentials (HTTP 401)', { retryable: true, permanent: true });
    const slots = new Map<string, ProviderSlot>([
      ["a", { model: failing("a", overloaded) }],
      ["b", { model: failing("b", refused) }],
      ["c", { model: failing("c", new GatewayError("internal", "c must not be called")) }],
    ]);
    let asked = 0;
    const observer: RouteObserver = { attemptStarted: () => undefined, attemptFailed() {}, mayTryNext: async () => ++asked < 2 };
    const failure = await generateOnRoute(request, config.routes.r!, slots, new AbortController().signal, observer).then(
      () => undefined,
      (error: GatewayError) => error,
    );
    // The passing failure is told (route-chat.ts, Failures.failed), the lasting one beside it.
    expect(failure?.message).toBe(`provider "a" is overloaded (the route's other targets: gpt-4o-mini: provider "b" rejected tollgate's credentials (HTTP 401))`);
    expect(failure?.permanent).toBe(false);
  });
});
