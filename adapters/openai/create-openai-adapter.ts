import OpenAI from "openai";
import type { ChatModel, TransportOptions } from "../../src/model/chat-model.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { refuseAnthropicDefinedTools } from "../shared/refuse-anthropic-tools.ts";
import type { ProviderErrorContext } from "../shared/map-provider-error.ts";
import { DEFAULT_TIMEOUT_MS } from "../shared/timeouts.ts";
import { boundedFetch } from "../shared/bounded-fetch.ts";
import { answerFailure, FinishCheck, readAnswerBody } from "../shared/finish-check.ts";
import { convertToOpenAIRequest } from "./convert-to-openai-request.ts";
import { mapOpenAIResponse } from "./map-openai-response.ts";
import { mapOpenAIStream } from "./map-openai-stream.ts";
import { prefillOf, streamWithoutRepeatedPrefill, withoutRepeatedPrefill } from "./repeated-prefill.ts";

export type OpenAIAdapterOptions = TransportOptions & {
  name: string;
  baseUrl?: string;
  apiKey?: string;
  keyVariable?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** The service tier every call asks for, in place of the client's "auto" or none (config's `serviceTier`). */
  serviceTier?: "default" | "priority";
};

export function createOpenAIAdapter(options: OpenAIAdapterOptions): ChatModel {
  const baseUrl = options.baseUrl ?? "https://api.openai.com/v1";
  const client = new OpenAI({
    // The config gives every openai provider a key; the SDK insists on one even where none was passed.
    apiKey: options.apiKey ?? "no-key",
    baseURL: baseUrl,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 0,
    // Every body bounded (a stream's events, an answer, a refusal): the SDK keeps what it reads.
    fetch: boundedFetch(options.fetch, options.name),
    ...(options.fetchOptions ? { fetchOptions: options.fetchOptions as NonNullable<ConstructorParameters<typeof OpenAI>[0]>["fetchOptions"] } : {}),
  });
  const errorContext: ProviderErrorContext = { provider: options.name, apiKey: options.apiKey, keyVariable: options.keyVariable, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  // A client may name only "auto" or "default" (the other tiers are refused): the pin replaces both.
  const pinnedTier = options.serviceTier ? { openAIServiceTier: options.serviceTier } : {};
  // OpenAI has no prefill: a model that writes the client's prefill again has it taken off (repeated-prefill.ts).

  return {
    providerName: options.name,
    providerType: "openai",
    baseUrl,
    refuse: (request) => refuseAnthropicDefinedTools(request, options.name),

    async generate(request, model, signal, headers) {
      const body = convertToOpenAIRequest({ ...request, ...pinnedTier, stream: false }, model, "openai");
      try {
        // The body read apart from the headers, so that a connection lost between them is billed.
        const response = await client.chat.completions.create({ ...body, stream: false }, { signal, ...(headers ? { headers } : {}) }).asResponse();
        const completion = await readAnswerBody<OpenAI.Chat.Completions.ChatCompletion>(response, signal, options.name, errorContext);
        return withoutRepeatedPrefill(mapOpenAIResponse(completion, options.name, request.stop), prefillOf(request));
      } catch (error) {
        throw answerFailure(error, signal, options.name, errorContext);
      }
    },

    async *stream(request, model, signal, headers): AsyncGenerator<StreamPart> {
      const body = convertToOpenAIRequest({ ...request, ...pinnedTier, stream: true }, model, "openai");
      const check = new FinishCheck(options.name);
      try {
        const chunks = await client.chat.completions.create({ ...body, stream: true }, { signal, ...(headers ? { headers } : {}) });
        const prefill = prefillOf(request);
        const parts = mapOpenAIStream(chunks, request.stop);
        for await (const part of prefill ? streamWithoutRepeatedPrefill(parts, prefill) : parts) {
          check.see(part);
          yield part;
        }
        const missing = check.missing(signal);
        if (missing) yield missing;
      } catch (error) {
        const failure = check.failure(error, errorContext, signal);
        if (failure) yield { type: "error", error: failure };
      }
    },
  };
}
