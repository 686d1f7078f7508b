import { createAnthropicAdapter } from "../../adapters/anthropic/create-anthropic-adapter.ts";
import { createOpenAICompatibleAdapter } from "../../adapters/openai-compatible/create-openai-compatible-adapter.ts";
import { createOpenAIAdapter } from "../../adapters/openai/create-openai-adapter.ts";
import type { ResolvedProvider } from "../config/resolve-config.ts";
import type { ChatModel, TransportOptions } from "../model/chat-model.ts";
import { withDeadlines } from "./call-deadlines.ts";

/** A provider tollgate can call, or why it cannot (an optional provider without its key). */
export type ProviderSlot = { model: ChatModel } | { unavailable: string };

/** `stop`: the host's stop, which cuts the streams still running (see call-deadlines.ts). */
export function createChatModels(providers: Record<string, ResolvedProvider>, transport: TransportOptions, stop?: AbortSignal): Map<string, ProviderSlot> {
  const slots = new Map<string, ProviderSlot>();
  for (const provider of Object.values(providers)) {
    if (provider.unavailableReason) {
      slots.set(provider.name, { unavailable: provider.unavailableReason });
      continue;
    }
    const common = {
      ...transport,
      name: provider.name,
      timeoutMs: provider.timeoutMs,
      maxRetries: provider.maxRetries,
      ...(provider.apiKeyValue ? { apiKey: provider.apiKeyValue } : {}),
      ...(provider.apiKey ? { keyVariable: provider.apiKey.env } : {}),
      ...(provider.baseUrl ? { baseUrl: provider.baseUrl } : {}),
    };
    const model = createAdapter(provider, common);
    slots.set(provider.name, { model: withDeadlines(model, { timeoutMs: provider.timeoutMs, idleMs: provider.streamIdleTimeoutMs ?? provider.timeoutMs, ...(stop ? { stop } : {}) }) });
  }
  return slots;
}

function createAdapter(provider: ResolvedProvider, common: Parameters<typeof createOpenAIAdapter>[0]): ChatModel {
  switch (provider.type) {
    case "openai":
      return createOpenAIAdapter({ ...common, ...(provider.serviceTier ? { serviceTier: provider.serviceTier } : {}) });
    case "anthropic":
      return createAnthropicAdapter({ ...common, apiKey: provider.apiKeyValue ?? "" });
    case "openai-compatible":
      // withDeadlines (in createChatModels) holds each call to timeoutMs: the adapter needs no timer of its own.
      return createOpenAICompatibleAdapter({ ...common, baseUrl: provider.baseUrl ?? "", boundedByCaller: true, ...(provider.imageUrls ? { imageUrls: provider.imageUrls } : {}) });
  }
}
