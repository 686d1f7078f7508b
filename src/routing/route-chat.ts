import type { RouteConfig } from "../config/config-schema.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { ChatModel } from "../model/chat-model.ts";
import type { ChatRequest } from "../model/chat-request.ts";
import type { ChatResponse } from "../model/chat-response.ts";
import type { StreamPart } from "../model/stream-part.ts";
import type { ProviderSlot } from "./create-chat-models.ts";

// The fallback strategy: try the route's targets in order and move on only when a target fails
// in a way another could fix (429, 5xx, network) and before anything reached the client. A stream
// is committed once its first part arrives; after that, a failure is the client's to see.

export type Target = { model: ChatModel; modelName: string };

export type RoutedResponse = { target: Target; response: ChatResponse; upstreamTtftMs: number };
export type RoutedStream = { target: Target; first: StreamPart; rest: AsyncGenerator<StreamPart>; upstreamTtftMs: number };

export async function generateOnRoute(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
): Promise<RoutedResponse> {
  let lastError: GatewayError | undefined;
  for (const target of usableTargets(route, slots)) {
    const started = performance.now();
    try {
      const response = await target.model.generate(request, target.modelName, signal);
      return { target, response, upstreamTtftMs: performance.now() - started };
    } catch (error) {
      if (!(error instanceof GatewayError) || !error.retryable) throw error;
      lastError = error;
    }
  }
  throw lastError ?? noTargetError(route, slots);
}

export async function streamOnRoute(
  request: ChatRequest,
  route: RouteConfig,
  slots: Map<string, ProviderSlot>,
  signal: AbortSignal,
): Promise<RoutedStream> {
  let lastError: GatewayError | undefined;
  for (const target of usableTargets(route, slots)) {
    const started = performance.now();
    const parts = target.model.stream(request, target.modelName, signal);
    const first = await parts.next();
    if (first.done) throw new GatewayError("upstream", `provider "${target.model.providerName}" closed the stream without answering`, { retryable: true });
    if (first.value.type === "error" && first.value.error.retryable) {
      lastError = first.value.error;
      continue;
    }
    if (first.value.type === "error") throw first.value.error;
    return { target, first: first.value, rest: parts, upstreamTtftMs: performance.now() - started };
  }
  throw lastError ?? noTargetError(route, slots);
}

function* usableTargets(route: RouteConfig, slots: Map<string, ProviderSlot>): Generator<Target> {
  for (const target of route.targets) {
    const slot = slots.get(target.provider);
    if (slot && "model" in slot) yield { model: slot.model, modelName: target.model };
  }
}

/** Every target is an optional provider without its key: say which variable to set. */
function noTargetError(route: RouteConfig, slots: Map<string, ProviderSlot>): GatewayError {
  const reasons = route.targets.flatMap((target) => {
    const slot = slots.get(target.provider);
    return slot && "unavailable" in slot ? [slot.unavailable] : [];
  });
  return new GatewayError("unavailable", reasons.join("; ") || "no provider of this route is available", { code: "provider_unavailable" });
}
