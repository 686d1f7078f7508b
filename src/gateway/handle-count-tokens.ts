import type { Context } from "hono";
import { foundNoCountEndpoint, mayAskToCount } from "../model/count-endpoint-memory.ts";
import type { PolicyChain } from "../../policies/policy-chain.ts";
import type { PolicyContext } from "../../policies/policy.ts";
import { teamOf } from "../auth/authenticate.ts";
import type { ResolvedConfig } from "../config/resolve-config.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { parseAnthropicCountTokensRequest, withAnthropicBetas } from "../dialects/anthropic/parse-anthropic-request.ts";
import { countRequestTokens, type TokenCounter } from "../metering/token-counter.ts";
import type { CountedWithEdits } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { CheapestFirst } from "../routing/cheapest-first.ts";
import type { Target } from "../routing/route-chat.ts";
import type { ProviderSlot } from "../routing/create-chat-models.ts";
import { callOnRoute } from "../routing/route-chat.ts";
import type { KeyValueStore } from "../store/key-value-store.ts";
import type { GatewayTelemetry } from "../telemetry/gateway-telemetry.ts";
import { findRoute } from "./find-route.ts";
import type { GatewayEnv } from "./gateway-context.ts";
import { jsonResponse } from "./json-response.ts";
import { readJsonBody } from "./read-json-body.ts";
import { perTargetStep } from "./per-target-step.ts";

// POST /v1/messages/count_tokens: Anthropic's token counting, which the Anthropic SDK's
// `messages.countTokens()` calls (and agents that manage their context window call often). It
// answers the input tokens the request would cost where a chat request would go: the route's
// policies shape it (a format instruction, a brevity line, a client's JSON schema written out for
// Claude), and its targets are tried in the route's order, skipping those that refuse it and
// moving on when one fails in a way the next could make good. Then:
//   - an Anthropic target counts the tokens itself (its count_tokens endpoint, which is free), and
//     so does llama-server (its template and tokenizer, adapters/openai-compatible/count-tokens.ts);
//   - other targets have no such endpoint: tollgate counts with its tokenizer, as it does for a
//     usage the provider never reported, and says so with `x-tollgate-estimated: true`. A decoder
//     found without a count endpoint is not asked again for NO_COUNT_RETRY_MS (count-endpoint-memory.ts).
// Counting spends nothing: it reserves no budget, takes nothing from a rate limit, leaves no
// cost record, and counts no prompt-cache sighting.

export type CountTokensDeps = {
  config: ResolvedConfig;
  slots: Map<string, ProviderSlot>;
  /** Orders a "cheapest" route's targets for this request, as a chat request would be. */
  order: CheapestFirst;
  policies: Map<string, PolicyChain>;
  store: KeyValueStore;
  counter: TokenCounter;
  telemetry: GatewayTelemetry;
  now?: () => number;
};

type Count = { inputTokens: number; estimated: boolean; contextManagement?: Record<string, unknown> };

export function createCountTokensHandler({ config, slots, order, policies, store, counter, telemetry, now = Date.now }: CountTokensDeps) {
  return async function handleCountTokens(c: Context<GatewayEnv>): Promise<Response> {
    const parsed = withAnthropicBetas(parseAnthropicCountTokensRequest(await readJsonBody(c.req.raw, config.server.maxBodyBytes)), c.req.raw.headers);
    const route = findRoute(config, c.get("caller"), parsed.route);
    const chain = policies.get(parsed.route)!;
    const context: PolicyContext = { route: parsed.route, team: teamOf(c.get("caller")), store, counter, perRequest: new Map(), countOnly: true };
    const { request } = await chain.apply(parsed, context);
    const signal = c.req.raw.signal;

    /**
     * The provider's own count, under a CLIENT span whose trace context the call carries;
     * undefined where the provider gives none.
     */
    async function countUpstream(target: Target, adapted: ChatRequest): Promise<number | CountedWithEdits | undefined> {
      const { model, modelName } = target;
      if (!model.countTokens || !mayAskToCount(model, now())) return undefined;
      const span = telemetry.startCountTokensSpan(c.get("requestSpan").span, { providerName: model.providerName, providerType: model.providerType, model: modelName, baseUrl: model.baseUrl });
      try {
        const counted = await model.countTokens(adapted, modelName, signal, telemetry.traceHeaders(span));
        if (counted === "no-endpoint") {
          foundNoCountEndpoint(model, now());
          telemetry.endChatSpan(span, { error: { type: "unsupported", message: `provider "${model.providerName}" has no count_tokens endpoint; tollgate counts for it` } });
          return undefined;
        }
        // Nothing was asked of the provider (a decoder's text tokenizer and a prompt with images).
        if (counted === "not-this-request") {
          telemetry.endChatSpan(span, {});
          return undefined;
        }
        telemetry.endChatSpan(span, { usage: { inputTokens: typeof counted === "number" ? counted : counted.inputTokens } });
        return counted;
      } catch (error) {
        const type = signal.aborted ? "cancelled" : error instanceof GatewayError ? (error.code ?? error.kind) : "_OTHER";
        telemetry.endChatSpan(span, { error: { type, message: error instanceof Error ? error.message : String(error) } });
        throw error;
      }
    }

    const { target, answer } = await callOnRoute(request, order.routeFor(request, route), slots, signal, perTargetStep(chain, context), async (adapted, target): Promise<Count> => {
      const counted = await countUpstream(target, adapted);
      if (counted === undefined) return { inputTokens: await countRequestTokens(counter, adapted), estimated: true };
      return typeof counted === "number" ? { inputTokens: counted, estimated: false } : { ...counted, estimated: false };
    });
    const body = { input_tokens: answer.inputTokens, ...(answer.contextManagement ? { context_management: answer.contextManagement } : {}) };
    return jsonResponse(body, 200, c.get("requestId"), {
      "x-tollgate-route": parsed.route,
      "x-tollgate-provider": target.model.providerName,
      "x-tollgate-model": target.modelName,
      ...(answer.estimated ? { "x-tollgate-estimated": "true" } : {}),
    });
  };
}
