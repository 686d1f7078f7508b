import type OpenAI from "openai";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import type { ChatModel, TransportOptions, UpstreamHeaders } from "../../src/model/chat-model.ts";
import { requestImages, type ChatRequest } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { StreamPart, TokenLogprob } from "../../src/model/stream-part.ts";
import { convertToOpenAIRequest } from "../openai/convert-to-openai-request.ts";
import { mapOpenAIResponse } from "../openai/map-openai-response.ts";
import { mapOpenAIStream } from "../openai/map-openai-stream.ts";
import { lastAssistantText, withoutRepeatedPrefill } from "../openai/repeated-prefill.ts";
import { refuseAnthropicDefinedTools } from "../shared/refuse-anthropic-tools.ts";
import { mapProviderError, type ProviderErrorContext } from "../shared/map-provider-error.ts";
import { DEFAULT_TIMEOUT_MS } from "../shared/timeouts.ts";
import { FinishCheck, readAnswerBody } from "../shared/finish-check.ts";
import { EventBound } from "../shared/event-bound.ts";
import { decoderTokenCount } from "./count-tokens.ts";
import { postChatCompletions } from "./post-chat-completions.ts";
import { readSseData } from "./read-sse-data.ts";

// vLLM, SGLang, llama.cpp's llama-server and Ollama all speak Chat Completions. They share the
// OpenAI adapter's request conversion and answer mapping, configured for what they add (top_k,
// min_p, cache_prompt, timings) and lack (max_completion_tokens). The call itself is made
// directly, not through the OpenAI SDK: a local decoder answers within milliseconds, so the
// SDK's per-call overhead would be a large share of each request (see docs/benchmarks.md).

export type OpenAICompatibleAdapterOptions = TransportOptions & {
  name: string;
  baseUrl: string;
  apiKey?: string;
  keyVariable?: string;
  timeoutMs?: number;
  /**
   * The caller bounds every call to `timeoutMs` from its start (the router's withDeadlines does),
   * so the adapter keeps no headers timer of its own: per call, that timer, its AbortController and
   * its listeners were about 7% of the gateway's own CPU for a local decoder's answer.
   */
  boundedByCaller?: boolean;
  /** "pass": send image URLs on, for the decoder to fetch; default: refuse them (see refuseImageUrls). */
  imageUrls?: "refuse" | "pass";
};

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

export function createOpenAICompatibleAdapter(options: OpenAICompatibleAdapterOptions): ChatModel {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const transport: TransportOptions = {
    ...(options.post ? { post: options.post } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.fetchOptions ? { fetchOptions: options.fetchOptions } : {}),
  };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const errorContext: ProviderErrorContext = { provider: options.name, apiKey: options.apiKey, keyVariable: options.keyVariable, timeoutMs };
  const callOptions = { timeoutMs: options.boundedByCaller ? undefined : timeoutMs, transport, ...(options.apiKey ? { apiKey: options.apiKey } : {}) };
  const call = (body: unknown, signal: AbortSignal, headers: UpstreamHeaders | undefined) => postChatCompletions({ ...callOptions, url, body, signal, ...(headers ? { headers } : {}) });
  const count = decoderTokenCount(options.baseUrl, callOptions);

  return {
    providerName: options.name,
    providerType: "openai-compatible",
    baseUrl: options.baseUrl,
    refuse: (request) => refuseAnthropicDefinedTools(request, options.name) ?? (options.imageUrls === "pass" ? undefined : refuseImageUrls(request, options.name)),

    async generate(request, model, signal, headers) {
      const body = convertToOpenAIRequest({ ...request, stream: false }, model, "compatible");
      try {
        const response = await call(body, signal, headers);
        const completion = await readAnswerBody<OpenAI.Chat.Completions.ChatCompletion>(response, signal, options.name, errorContext);
        let answer = mapOpenAIResponse(completion, options.name, request.stop);
        answer = withoutRepeatedTurn(answer, request);
        return request.logprobs ? withAlternatives(answer, request.logprobs.top ?? 0) : answer;
      } catch (error) {
        throw mapProviderError(error, errorContext);
      }
    },

    async countTokens(request, model, signal, headers) {
      try {
        return await count(request, model, signal, headers);
      } catch (error) {
        throw mapProviderError(error, errorContext);
      }
    },

    async *stream(request, model, signal, headers): AsyncGenerator<StreamPart> {
      const body = convertToOpenAIRequest({ ...request, stream: true }, model, "compatible");
      const check = new FinishCheck(options.name);
      try {
        const response = await call({ ...body, stream: true }, signal, headers);
        const top = request.logprobs?.top ?? 0;
        for await (const part of mapOpenAIStream(parseChunks(readSseData(response.body, new EventBound(options.name)), options.name), request.stop)) {
          check.see(part);
          yield part.type === "text-delta" && part.logprobs ? { ...part, logprobs: keepAlternatives(part.logprobs, top) } : part;
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

/**
 * Each event's JSON; an `{"error": …}` event (vLLM, llama-server mid-stream) is thrown as the SDKs
 * would. An event that is not JSON may only be a cut stream's torn last one (the missing finish
 * is reported instead): one with more after it lost part of the answer, which is then an error.
 * Was: skipped, and the client got the rest as a whole answer, billed and cached as complete.
 */
async function* parseChunks(data: AsyncGenerator<string>, providerName: string): AsyncGenerator<Chunk> {
  let torn = false;
  for await (const text of data) {
    if (torn) {
      throw new GatewayError("upstream", `provider "${providerName}" sent a stream event that is not JSON in the middle of its answer, so part of the answer is lost`, { retryable: true });
    }
    let chunk: Chunk & { error?: unknown };
    try {
      chunk = JSON.parse(text) as Chunk & { error?: unknown };
    } catch {
      torn = true;
      continue;
    }
    if (chunk.error) throw Object.assign(new Error("error event in stream"), { error: chunk });
    yield chunk;
  }
}

/**
 * A local decoder fetches an image URL itself (vLLM does), from inside the network it runs in:
 * a client could make it reach addresses nobody outside may reach (no SSRF, PRODUCT.md). Images
 * sent inline (data: URLs, base64) go on; a URL is refused unless the provider says "pass".
 */
function refuseImageUrls(request: ChatRequest, providerName: string): GatewayError | undefined {
  if (!requestImages(request).some((image) => image.source === "url")) return undefined;
  return new GatewayError(
    "invalid_request",
    `provider "${providerName}" would fetch this image URL itself, from inside its network: send the image inline (a data: URL or base64), or set providers.${providerName}.imageUrls to "pass" to let it fetch URLs`,
    { param: "messages" },
  );
}

/** Each token's alternatives cut to the `top` the client asked for (see convertToOpenAIRequest). */
function keepAlternatives(logprobs: TokenLogprob[], top: number): TokenLogprob[] {
  return logprobs.map((token) => (token.top_logprobs.length > top ? { ...token, top_logprobs: token.top_logprobs.slice(0, top) } : token));
}

function withAlternatives(answer: ChatResponse, top: number): ChatResponse {
  return {
    ...answer,
    ...(answer.logprobs ? { logprobs: keepAlternatives(answer.logprobs, top) } : {}),
    ...(answer.refusalLogprobs ? { refusalLogprobs: keepAlternatives(answer.refusalLogprobs, top) } : {}),
  };
}

/**
 * llama-server continues a conversation's last assistant turn, whichever client sent it, and its
 * answer not streamed starts with that turn's text again (streamed, it sends only the
 * continuation): an Anthropic client, which joins its prefill and the answer itself, would read
 * the prefill twice. Only llama-server repeats it, and only llama-server sends `timings`: an
 * answer from another decoder that starts like the turn is the model's own text.
 */
function withoutRepeatedTurn(answer: ChatResponse, request: ChatRequest): ChatResponse {
  return answer.timings ? withoutRepeatedPrefill(answer, lastAssistantText(request)) : answer;
}
