import Anthropic from "@anthropic-ai/sdk";
import type { Stream } from "@anthropic-ai/sdk/streaming";
import type { ChatModel, TransportOptions, UpstreamHeaders } from "../../src/model/chat-model.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { mapProviderError, type ProviderErrorContext } from "../shared/map-provider-error.ts";
import { DEFAULT_TIMEOUT_MS } from "../shared/timeouts.ts";
import { boundedFetch } from "../shared/bounded-fetch.ts";
import { answerFailure, FinishCheck, readAnswerBody } from "../shared/finish-check.ts";
import { convertToAnthropicRequest, refuseBlankLastTurn, refuseImageType } from "./convert-to-anthropic-request.ts";
import { contextManagementOf, mapAnthropicResponse } from "./map-anthropic-response.ts";
import { streamWithPrefill, withPrefill } from "./prefill.ts";
import { mapAnthropicStream } from "./map-anthropic-stream.ts";

export type AnthropicAdapterOptions = TransportOptions & {
  name: string;
  apiKey: string;
  keyVariable?: string;
  baseUrl?: string;
  timeoutMs?: number;
  maxRetries?: number;
};

/**
 * The Messages API through the SDK's client (its errors, retries and SSE parser) rather than
 * `messages.create`, which prints a deprecation line to the console on every call to a model
 * that Anthropic is retiring: on a gateway, one line per request. tollgate says it once, at
 * start-up, naming the route (src/config/retirement-warnings.ts).
 */
const MESSAGES_PATH = "/v1/messages";

export function createAnthropicAdapter(options: AnthropicAdapterOptions): ChatModel {
  const baseUrl = options.baseUrl ?? "https://api.anthropic.com";
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: baseUrl,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 0,
    // tollgate's own CLIENT span (src/telemetry) covers each call; the SDK's would count it twice.
    openTelemetry: false,
    // Every body bounded (a stream's events, an answer, a refusal): the SDK keeps what it reads.
    fetch: boundedFetch(options.fetch, options.name),
    ...(options.fetchOptions ? { fetchOptions: options.fetchOptions as NonNullable<ConstructorParameters<typeof Anthropic>[0]>["fetchOptions"] } : {}),
  });
  const errorContext: ProviderErrorContext = { provider: options.name, apiKey: options.apiKey, keyVariable: options.keyVariable, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };

  return {
    providerName: options.name,
    providerType: "anthropic",
    baseUrl,
    refuse: (request) => refuseBlankLastTurn(request, options.name) ?? refuseImageType(request, options.name),

    async generate(request, model, signal, traceHeaders) {
      const body = convertToAnthropicRequest(request, model);
      const headers = callHeaders(request, traceHeaders);
      try {
        // The body read apart from the headers, so that a connection lost between them is billed.
        const raw = await client.post<Anthropic.Message>(MESSAGES_PATH, { body: { ...body, stream: false }, signal, ...(headers ? { headers } : {}) }).asResponse();
        const message = await readAnswerBody<Anthropic.Message>(raw, signal, options.name, errorContext);
        const response = mapAnthropicResponse(message);
        return request.prefill ? withPrefill(response, request.prefill) : response;
      } catch (error) {
        throw answerFailure(error, signal, options.name, errorContext);
      }
    },

    async countTokens(request, model, signal, traceHeaders) {
      const headers = callHeaders(request, traceHeaders);
      // count_tokens takes the prompt's fields only: anything about the answer (max_tokens,
      // sampling, stop sequences, metadata) is refused there as an extra input.
      // The structured-output schema and the cache breakpoint are part of the prompt too.
      const { messages, system, tools, tool_choice, thinking, output_config, cache_control, context_management } = convertToAnthropicRequest(request, model);
      try {
        const counted = await client.messages.countTokens(
          {
            model,
            messages,
            ...(system ? { system } : {}),
            ...(tools ? { tools: tools as Anthropic.Messages.MessageCountTokensTool[] } : {}),
            ...(tool_choice ? { tool_choice } : {}),
            ...(thinking ? { thinking } : {}),
            ...(output_config ? { output_config } : {}),
            ...(cache_control ? { cache_control } : {}),
            ...(context_management ? { context_management } : {}),
          } as Anthropic.Messages.MessageCountTokensParams,
          { signal, ...(headers ? { headers } : {}) },
        );
        // With context editing (a beta), the answer also says what the count was before it.
        const edits = contextManagementOf(counted).contextManagement;
        return edits ? { inputTokens: counted.input_tokens, contextManagement: edits } : counted.input_tokens;
      } catch (error) {
        throw mapProviderError(error, errorContext);
      }
    },

    async *stream(request, model, signal, traceHeaders): AsyncGenerator<StreamPart> {
      const body = convertToAnthropicRequest(request, model);
      const headers = callHeaders(request, traceHeaders);
      const check = new FinishCheck(options.name);
      try {
        const events = await client.post<Stream<Anthropic.RawMessageStreamEvent>>(MESSAGES_PATH, { body: { ...body, stream: true }, stream: true, signal, ...(headers ? { headers } : {}) });
        const parts = request.prefill ? streamWithPrefill(mapAnthropicStream(events), request.prefill) : mapAnthropicStream(events);
        for await (const part of parts) {
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

/** The call's trace context, and the client's beta features (which are headers, not body fields). */
function callHeaders(request: ChatRequest, traceHeaders: UpstreamHeaders | undefined): UpstreamHeaders | undefined {
  if (!request.anthropicBetas) return traceHeaders;
  return { ...traceHeaders, "anthropic-beta": request.anthropicBetas.join(",") };
}
