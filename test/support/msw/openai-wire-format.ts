// Builders for the exact JSON the OpenAI Chat Completions API sends, field for field and in the
// same key order as captured responses (api.openai.com, 2025-2026; openai-node 6.x types):
// `chat.completion`, `chat.completion.chunk`, usage, and `{"error":{...}}` bodies.

import { randomHex, randomString } from "./mock-support.ts";

/** Token counts a test can script; the rest of OpenAI's usage object is derived from them. */
export interface OpenAIUsageInput {
  /** INCLUDES cached_tokens, as on the real API. */
  prompt_tokens: number;
  /** INCLUDES reasoning_tokens, as on the real API. */
  completion_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

export interface OpenAIToolCall {
  /** `call_…`; generated when omitted. */
  id?: string;
  name: string;
  /** The arguments as a JSON string, exactly as the model would emit them. */
  arguments: string;
}

/** Per-response values shared by every chunk of one stream (they repeat on each real chunk). */
export interface OpenAIResponseIdentity {
  id: string;
  created: number;
  model: string;
  systemFingerprint: string;
  /** The tier that served the answer: "default", unless the project's settings say otherwise. */
  serviceTier: string;
}

export function newResponseIdentity(model: string): OpenAIResponseIdentity {
  return {
    id: `chatcmpl-${randomString(29)}`,
    created: Math.floor(Date.now() / 1000),
    model,
    systemFingerprint: `fp_${randomHex(10)}`,
    serviceTier: "default",
  };
}

export function newToolCallId(): string {
  return `call_${randomString(24)}`;
}

/** `x-request-id` as OpenAI formats it: `req_` + 32 hex digits. */
export function newOpenAIRequestId(): string {
  return `req_${randomHex(32)}`;
}

export function buildUsage(input: OpenAIUsageInput) {
  return {
    prompt_tokens: input.prompt_tokens,
    completion_tokens: input.completion_tokens,
    total_tokens: input.prompt_tokens + input.completion_tokens,
    prompt_tokens_details: { cached_tokens: input.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: input.reasoning_tokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export type OpenAIFinishReason = "stop" | "length" | "content_filter" | "tool_calls";

/** The non-streaming `chat.completion` object. `content` is null when the model only called tools. */
export function buildChatCompletion(
  identity: OpenAIResponseIdentity,
  answer: { content: string | null; toolCalls?: OpenAIToolCall[]; finishReason: OpenAIFinishReason; logprobs?: OpenAITokenLogprob[] },
  usage: OpenAIUsageInput,
) {
  const message: Record<string, unknown> = { role: "assistant", content: answer.content };
  if (answer.toolCalls?.length) {
    message.tool_calls = answer.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  message.refusal = null;
  message.annotations = [];
  return {
    id: identity.id,
    object: "chat.completion",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message, logprobs: answer.logprobs ? { content: answer.logprobs, refusal: null } : null, finish_reason: answer.finishReason }],
    usage: buildUsage(usage),
    service_tier: identity.serviceTier,
    system_fingerprint: identity.systemFingerprint,
  };
}

/** How the request asked the stream to be shaped (`stream_options`). */
export interface OpenAIStreamShape {
  /** `stream_options.include_usage`: adds `usage: null` to every chunk and a final usage chunk. */
  includeUsage: boolean;
  /**
   * `stream_options.include_obfuscation` (default true since Aug 2025): every chunk carries a random
   * `obfuscation` string that pads payload sizes against side-channel attacks.
   */
  includeObfuscation: boolean;
}

/**
 * One `chat.completion.chunk`. When usage was not requested the `usage` key is absent altogether
 * (not null), exactly as the real API does.
 */
export function buildChunk(
  identity: OpenAIResponseIdentity,
  shape: OpenAIStreamShape,
  choices: unknown[],
  usage: ReturnType<typeof buildUsage> | null = null,
) {
  const chunk: Record<string, unknown> = {
    id: identity.id,
    object: "chat.completion.chunk",
    created: identity.created,
    model: identity.model,
    service_tier: identity.serviceTier,
    system_fingerprint: identity.systemFingerprint,
    choices,
  };
  if (shape.includeUsage) chunk.usage = usage;
  if (shape.includeObfuscation) chunk.obfuscation = randomString(1 + Math.floor(Math.random() * 15));
  return chunk;
}

/** A streamed choice: `delta` plus the `logprobs`/`finish_reason` every real chunk repeats. */
export function streamChoice(delta: Record<string, unknown>, finishReason: OpenAIFinishReason | null = null, logprobs?: OpenAITokenLogprob[]) {
  return { index: 0, delta, logprobs: logprobs ? { content: logprobs, refusal: null } : null, finish_reason: finishReason };
}

/** `ChatCompletionTokenLogprob`: a token, its log probability, its UTF-8 bytes, and the likeliest alternatives. */
export type OpenAITokenLogprob = {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
};

/**
 * The stand-in's log probabilities for an answer's pieces (one token each), as OpenAI gives them
 * when asked (`logprobs: true`, `top_logprobs: top`): the piece itself first, at −0.25 × its
 * position, then made-up alternatives.
 */
export function pieceLogprobs(pieces: readonly string[], top: number): OpenAITokenLogprob[] {
  const bytes = (token: string) => [...Buffer.from(token, "utf8")];
  return pieces.map((token, index) => {
    const logprob = -0.25 * (index + 1);
    const alternatives = [{ token, logprob, bytes: bytes(token) }, ...Array.from({ length: 19 }, (_, n) => ({ token: `alt${n}`, logprob: logprob - n - 1, bytes: bytes(`alt${n}`) }))];
    return { token, logprob, bytes: bytes(token), top_logprobs: alternatives.slice(0, top) };
  });
}

/** The first delta of a text answer. */
export const FIRST_TEXT_DELTA = { role: "assistant", content: "", refusal: null } as const;

/** One SSE frame: OpenAI sends `data:` lines only (no `event:`), each followed by a blank line. */
export function sseData(payload: unknown): string {
  return `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

// ---- errors ----

export function openAIErrorBody(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

/**
 * OpenAI's 401 echoes the key it got, masked in the middle: the first 8 and last 4 characters survive
 * ("sk-5f6ce***********************acdb"); a short key is echoed whole ("…provided: dummy").
 */
export function maskKeyLikeOpenAI(key: string): string {
  if (key.length <= 12) return key;
  return `${key.slice(0, 8)}${"*".repeat(key.length - 12)}${key.slice(-4)}`;
}

export function incorrectApiKeyBody(presentedKey: string) {
  return openAIErrorBody(
    `Incorrect API key provided: ${maskKeyLikeOpenAI(presentedKey)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    "invalid_request_error",
    "invalid_api_key",
  );
}

export const MISSING_API_KEY_BODY = openAIErrorBody(
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
  "invalid_request_error",
  null,
);

export const INVALID_JSON_BODY = openAIErrorBody(
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
  "invalid_request_error",
  null,
);

/** Default `{type, code, message}` per status, as OpenAI words them. */
export function defaultOpenAIError(status: number, model: string, retryAfterSeconds: number | undefined) {
  switch (status) {
    case 429:
      // Real TPM throttles say type "tokens" (or "requests"), not "rate_limit_error".
      return {
        type: "tokens",
        code: "rate_limit_exceeded",
        message: `Rate limit reached for ${model} in organization org-mock on tokens per min (TPM): Limit 30000, Used 30000, Requested 100. Please try again in ${retryAfterSeconds ?? 1}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
      };
    case 503:
      return {
        type: "service_unavailable_error",
        code: "server_is_overloaded",
        message: "The server is overloaded or not ready yet.",
      };
    case 401:
      return { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." };
    case 404:
      return {
        type: "invalid_request_error",
        code: "model_not_found",
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
      };
    default:
      return status >= 500
        ? { type: "server_error", code: null, message: "The server had an error while processing your request. Sorry about that!" }
        : { type: "invalid_request_error", code: null, message: "Invalid request." };
  }
}
