import type { Attributes } from "@opentelemetry/api";
import { toOpenAIFinishReason } from "../dialects/finish-reasons.ts";
import type { AssistantContent, ChatMessage, ChatRequest } from "../model/chat-request.ts";
import { sentMaxTokens } from "../model/sent-max-tokens.ts";
import type { FinishReason } from "../model/stream-part.ts";
import { totalInputTokens, type Usage } from "../model/usage.ts";

// The OpenTelemetry GenAI semantic conventions (v1.41) as pure mappings from tollgate's own types
// to attribute maps. No SDK here: these functions are tested by comparing plain objects, and the
// gateway can call them whether or not anything is exporting.

export type ProviderType = "openai" | "anthropic" | "openai-compatible";

export type ChatTarget = {
  /** The provider's name in tollgate's config. */
  providerName: string;
  providerType: ProviderType;
  /** The model sent upstream. */
  model: string;
  baseUrl?: string;
};

export type ChatResponseFacts = {
  responseId?: string;
  responseModel?: string;
  finishReason?: FinishReason;
  usage?: Usage;
  timeToFirstChunkSeconds?: number;
};

export function chatSpanName(model: string): string {
  return `chat ${model}`;
}

/**
 * The convention's well-known names for the two cloud APIs; a local decoder behind the
 * OpenAI-compatible adapter is named by its config entry, since "openai" would be wrong for it.
 */
export function genAiProviderName(target: Pick<ChatTarget, "providerName" | "providerType">): string {
  return target.providerType === "openai-compatible" ? target.providerName : target.providerType;
}

/** The span name of a provider's token count: the convention's `{operation} {model}`. */
export function countTokensSpanName(model: string): string {
  return `count_tokens ${model}`;
}

/**
 * A token count is no operation the convention lists, so it carries Anthropic's own name for
 * it, as the convention asks of a system's own operations; its count is gen_ai.usage.input_tokens.
 */
export function countTokensRequestAttributes(target: ChatTarget): Attributes {
  return targetAttributes("count_tokens", target);
}

export function chatRequestAttributes(request: ChatRequest, target: ChatTarget): Attributes {
  const attributes = targetAttributes("chat", target);
  // Anthropic needs a max_tokens: its adapter sends one where the request has none, and the span
  // tells what was sent.
  const maxTokens = sentMaxTokens(target.providerType, request);
  if (maxTokens !== undefined) attributes["gen_ai.request.max_tokens"] = maxTokens;
  if (request.temperature !== undefined) attributes["gen_ai.request.temperature"] = request.temperature;
  if (request.topP !== undefined) attributes["gen_ai.request.top_p"] = request.topP;
  if (request.topK !== undefined) attributes["gen_ai.request.top_k"] = request.topK;
  if (request.seed !== undefined) attributes["gen_ai.request.seed"] = request.seed;
  if (request.frequencyPenalty !== undefined) attributes["gen_ai.request.frequency_penalty"] = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) attributes["gen_ai.request.presence_penalty"] = request.presencePenalty;
  // Conditionally required when the request names an output format; both JSON forms are "json".
  if (request.responseFormat !== undefined) attributes["gen_ai.output.type"] = request.responseFormat.type === "text" ? "text" : "json";
  if (request.stop !== undefined && request.stop.length > 0) attributes["gen_ai.request.stop_sequences"] = request.stop;
  return attributes;
}

/** What every call to a provider says of where it went. */
function targetAttributes(operation: string, target: ChatTarget): Attributes {
  const attributes: Attributes = {
    "gen_ai.operation.name": operation,
    "gen_ai.provider.name": genAiProviderName(target),
    "gen_ai.request.model": target.model,
    "tollgate.provider": target.providerName,
  };
  if (target.baseUrl !== undefined) {
    const server = parseServer(target.baseUrl);
    if (server) {
      attributes["server.address"] = server.address;
      attributes["server.port"] = server.port;
    }
  }
  return attributes;
}

export function chatResponseAttributes(facts: ChatResponseFacts): Attributes {
  const attributes: Attributes = {};
  if (facts.responseId !== undefined) attributes["gen_ai.response.id"] = facts.responseId;
  if (facts.responseModel !== undefined) attributes["gen_ai.response.model"] = facts.responseModel;
  if (facts.finishReason !== undefined) {
    attributes["gen_ai.response.finish_reasons"] = [toOpenAIFinishReason(facts.finishReason)];
  }
  const usage = facts.usage;
  if (usage) {
    // The convention counts cached tokens as input; tollgate's inputTokens excludes them.
    if (usage.inputTokens !== undefined || usage.cacheReadTokens !== undefined || hasCacheWrites(usage)) {
      attributes["gen_ai.usage.input_tokens"] = totalInputTokens(usage);
    }
    if (usage.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
    if (usage.cacheReadTokens !== undefined) attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cacheReadTokens;
    if (hasCacheWrites(usage)) {
      attributes["gen_ai.usage.cache_creation.input_tokens"] =
        (usage.cacheWrite5mTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
    }
    if (usage.reasoningTokens !== undefined) {
      attributes["gen_ai.usage.reasoning.output_tokens"] = usage.reasoningTokens;
    }
  }
  if (facts.timeToFirstChunkSeconds !== undefined) {
    attributes["gen_ai.response.time_to_first_chunk"] = facts.timeToFirstChunkSeconds;
  }
  return attributes;
}

function hasCacheWrites(usage: Usage): boolean {
  return usage.cacheWrite5mTokens !== undefined || usage.cacheWrite1hTokens !== undefined;
}

function parseServer(baseUrl: string): { address: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    // Config validation already rejects bad URLs; telemetry must never be the thing that throws.
    return undefined;
  }
  // URL keeps IPv6 hosts in brackets; the convention wants the bare address.
  const address = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { address, port };
}

// Content capture (opt-in only). The convention's structured message format as JSON strings:
// prompts and answers can hold personal data, so nothing below runs unless the operator asked.

type MessagePart =
  | { type: "text"; content: string }
  | { type: "uri"; modality: "image"; uri: string }
  | { type: "blob"; modality: "image"; mime_type: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_call_response"; id: string; response: string }
  | { type: "reasoning"; content: string };

export function chatInputMessagesAttributes(messages: ChatMessage[]): Attributes {
  const converted = messages.map((message) => ({ role: message.role, parts: messageParts(message) }));
  return { "gen_ai.input.messages": JSON.stringify(converted) };
}

export function chatOutputMessagesAttributes(content: AssistantContent[], finishReason: FinishReason | undefined): Attributes {
  const message = {
    role: "assistant",
    parts: assistantParts(content),
    finish_reason: finishReason === undefined ? undefined : toOpenAIFinishReason(finishReason),
  };
  return { "gen_ai.output.messages": JSON.stringify([message]) };
}

function assistantParts(content: AssistantContent[]): MessagePart[] {
  return content.flatMap((part): MessagePart[] => {
    switch (part.type) {
      case "text":
        return [{ type: "text", content: part.text }];
      case "tool-call":
        return [{ type: "tool_call", id: part.id, name: part.name, arguments: part.arguments }];
      case "thinking":
        return part.text ? [{ type: "reasoning", content: part.text }] : [];
      // Encrypted: nothing a trace could show.
      case "redacted-thinking":
        return [];
    }
  });
}

function messageParts(message: ChatMessage): MessagePart[] {
  switch (message.role) {
    case "system":
      return [{ type: "text", content: message.content }];
    case "tool":
      return [{ type: "tool_call_response", id: message.toolCallId, response: message.content }];
    case "user":
      return message.content.map((part): MessagePart => {
        if (part.type === "text") return { type: "text", content: part.text };
        // Inline image bytes would dwarf every other attribute; the media type says enough.
        if (part.source === "base64") return { type: "blob", modality: "image", mime_type: part.mediaType };
        return { type: "uri", modality: "image", uri: part.url };
      });
    case "assistant":
      return assistantParts(message.content);
  }
}
