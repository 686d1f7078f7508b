import { GatewayError, OVERLOADED, type RateLimitUnit } from "../../src/errors/gateway-error.ts";
import { redactSecrets } from "./redact-secrets.ts";
import { didNotAnswer } from "./timeouts.ts";
import { answerTooLong, bodyTooLong } from "./body-bound.ts";

// Both official SDKs throw APIError subclasses of the same shape (status, headers, error body),
// so one mapping serves every adapter. What a client may see is decided here: a provider's
// auth failure is tollgate's misconfiguration (502), never the client's, and provider messages
// are scrubbed of the provider key (OpenAI's 401 message echoes part of it; redact-secrets.ts).

type SdkError = Error & { status?: number; headers?: Headers | Record<string, string>; error?: unknown };

export type ProviderErrorContext = { provider: string; apiKey?: string; keyVariable?: string; timeoutMs?: number };

/**
 * Whether a provider's call failed in the network (a refused or reset connection, a body cut
 * mid-read) rather than with an answer: no HTTP status, no error body, no deadline, and the
 * marks of a transport failure (undici's "terminated" and socket codes, the SDKs' connection
 * errors). Not any other throw: a bug of tollgate's own while reading a stream is no lost connection.
 */
export function isNetworkFailure(error: unknown): boolean {
  if (error instanceof GatewayError || error instanceof SyntaxError) return false;
  const sdkError = error as SdkError;
  if (typeof sdkError?.status === "number" || errorType(sdkError) || isTimeout(sdkError)) return false;
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    const code = (at as Error & { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.test(code)) return true;
    if (NETWORK_MESSAGES.test(at.message) || at.name === "APIConnectionError") return true;
  }
  return false;
}

const NETWORK_CODES = /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED)$/;
// workerd rejects a fetch whose connection dropped with a plain Error, "Network connection lost."
const NETWORK_MESSAGES = /^(terminated|fetch failed|socket hang up|other side closed|network ?error|connection error\.?|network connection lost\.?)$/i;

export function mapProviderError(error: unknown, context: ProviderErrorContext): GatewayError {
  if (error instanceof GatewayError) return error;
  // An answer's body past its bound (body-bound.ts), thrown by the transport or by the SDK reading it.
  const tooLong = bodyTooLong(error);
  if (tooLong) return answerTooLong(context.provider, tooLong.limit, error);
  const sdkError = error as SdkError;
  const status = typeof sdkError?.status === "number" ? sdkError.status : undefined;
  const upstreamMessage = redactSecrets(providerMessage(sdkError), context.apiKey);
  const where = `provider "${context.provider}"`;

  if (status === undefined) {
    // An error event inside a 200 stream: the SDKs throw it with no status but with the body.
    const streamedType = errorType(sdkError);
    if (streamedType) {
      // Refused before its first token, in the stream's first event (llama-server, older SGLang):
      // the same refusal as its HTTP form, a prompt longer than the model's context included.
      if (exceedsContext(sdkError, upstreamMessage)) return contextExceeded(where, upstreamMessage, error);
      return mapStreamedError(streamedType, streamedStatus(sdkError), where, upstreamMessage, error);
    }
    if (isTimeout(sdkError)) return new GatewayError("timeout", didNotAnswer(where, context.timeoutMs), { retryable: true, cause: error });
    // It answered, with something that is not JSON (an HTML error page, an empty body): not a network problem.
    if (error instanceof SyntaxError) {
      return new GatewayError("upstream", `${where} answered with a body that is not JSON (${redactSecrets(error.message, context.apiKey).slice(0, 120)}); check that its baseUrl is a Chat Completions or Messages API`, {
        retryable: true,
        cause: error,
      });
    }
    // The transport's own words name the provider's host and port ("connect ECONNREFUSED
    // 10.0.0.5:8000", "getaddrinfo ENOTFOUND gpu-3.internal"): the log gets them, the client
    // only what kind of failure it was. Was: the address in every client's 502.
    return new GatewayError("upstream", `could not reach ${where} (${networkFailureKind(error)})`, {
      retryable: true,
      logDetail: redactSecrets(transportMessage(error), context.apiKey),
      cause: error,
    });
  }
  // tollgate's own key or model name is wrong for this provider: nothing the client sent, so another
  // target (another account, provider or model) may still answer.
  if (status === 401 || status === 403) {
    const fix = context.keyVariable ? `check ${context.keyVariable}` : "check its apiKey in the tollgate config";
    return new GatewayError("upstream", `${where} rejected tollgate's credentials (HTTP ${status}); ${fix}`, { retryable: true, permanent: true, cause: error });
  }
  // The provider account's money, not the client's request or its pace: Anthropic's 402
  // billing_error, OpenAI's 429 insufficient_quota (REFERENCE.md: not to be retried as a rate
  // limit), and Anthropic's 400s for an account out of credit or past its own spend limit, which
  // it sends as invalid_request_error. Another target, on another account, may still answer.
  const outOfCredit = status === 400 && ANTHROPIC_ACCOUNT_LIMIT.test(upstreamMessage);
  if (status === 402 || outOfCredit || (status === 429 && upstreamCodeAndParam(sdkError).code === "insufficient_quota") || errorType(sdkError) === "insufficient_quota") {
    return new GatewayError("upstream", `${where} refused tollgate's account for billing or quota (HTTP ${status}): ${upstreamMessage}; check the provider account's plan and billing`, {
      code: status === 402 || outOfCredit ? "provider_billing_error" : "insufficient_quota",
      retryable: true,
      permanent: true,
      cause: error,
    });
  }
  // Anthropic's 429 rate_limit_error "Extra usage is required for long context requests." is a
  // standing gate on the account's plan, not a pace: retrying the same prompt never helps. Another
  // target may take the prompt; if none does, the client learns that its prompt is too long here
  // (OpenAI's `context_length_exceeded`, on which agents trim their history) instead of a 429 its
  // SDK would retry.
  if (status === 429 && ANTHROPIC_LONG_CONTEXT_GATE.test(upstreamMessage)) {
    return new GatewayError("invalid_request", `${where} refused a long-context prompt (HTTP 429): ${upstreamMessage} This is the provider account's plan, not a rate limit: send a shorter prompt, or enable long-context usage on the provider account`, {
      code: "context_length_exceeded",
      param: "messages",
      retryable: true,
      cause: error,
    });
  }
  if (status === 429) {
    return new GatewayError("rate_limit", `${where} is rate limiting: ${upstreamMessage}`, {
      retryAfterSeconds: retryAfter(sdkError.headers),
      code: "rate_limit_exceeded",
      ...rateLimitUnit(errorType(sdkError)),
      retryable: true,
      cause: error,
    });
  }
  if (status === 408 || status === 504) return new GatewayError("timeout", `${where} timed out: ${upstreamMessage}`, { retryable: true, cause: error });
  if (status === 503 || status === 529) {
    return new GatewayError("unavailable", `${where} is overloaded: ${upstreamMessage}`, {
      code: OVERLOADED,
      retryAfterSeconds: retryAfter(sdkError.headers),
      retryable: true,
      cause: error,
    });
  }
  // llama-server answers a 500 for input its model cannot read (an image without a vision
  // projector): the request, not the server, and no retry changes it. Another target may read it.
  if (status >= 500 && UNREADABLE_INPUT.test(upstreamMessage)) {
    return new GatewayError("invalid_request", `${where} cannot read this request's input: ${upstreamMessage}; send it to a route whose model reads it`, { param: "messages", retryable: true, cause: error });
  }
  if (status >= 500) return new GatewayError("upstream", `${where} failed (HTTP ${status}): ${upstreamMessage}`, { retryable: true, cause: error });
  // A decoder started without tool calling refuses every request with tools: the target's
  // setup, not the request. Another target (a cloud model) may call them, so the route moves on.
  if (status === 400 && TOOLS_OFF.test(upstreamMessage)) {
    return new GatewayError("invalid_request", `${where} cannot call tools as it runs: ${upstreamMessage}; send this request to a route whose model calls tools, or start the decoder with tool calling on`, {
      param: "tools",
      retryable: true,
      cause: error,
    });
  }
  if (status === 413) return new GatewayError("request_too_large", `${where}: ${upstreamMessage}`, { cause: error });
  // A server's own "no such path" (FastAPI's {"detail":"Not Found"} from vLLM and SGLang, Go's
  // "404 page not found" from Ollama) is a baseUrl without its /v1, not an unknown model.
  if (status === 404 && isNoSuchPath(sdkError)) {
    return new GatewayError("upstream", `${where} has no Chat Completions endpoint at its baseUrl (HTTP 404: ${upstreamMessage}); check providers.${context.provider}.baseUrl: OpenAI-compatible servers serve it under /v1`, {
      retryable: true,
      permanent: true,
      cause: error,
    });
  }
  // Both are the config's to fix, as a refused key is: the next target may answer, but a client's
  // retry would only fail again (the SDKs retried the 502 twice: three calls per request).
  if (status === 404) return new GatewayError("upstream", `${where} does not know the configured model: ${upstreamMessage}`, { retryable: true, permanent: true, cause: error });
  // Other 4xx: the request itself is wrong for this provider (context too long, bad schema, …).
  // The provider's code and param pass on: clients branch on them (an agent trims its history on
  // OpenAI's `context_length_exceeded`), so a local decoder's own words for that become it too.
  const codeAndParam = upstreamCodeAndParam(sdkError, context.apiKey);
  if (!codeAndParam.code && exceedsContext(sdkError, upstreamMessage)) codeAndParam.code = "context_length_exceeded";
  return new GatewayError("invalid_request", `${where} rejected the request: ${upstreamMessage}`, { ...codeAndParam, cause: error });
}

function isNoSuchPath(error: SdkError): boolean {
  const body = error?.error as { detail?: unknown; message?: unknown } | undefined;
  return body?.detail === "Not Found" || /^\s*404 page not found\s*$/i.test(typeof body?.message === "string" ? body.message : "");
}

function contextExceeded(where: string, message: string, cause: unknown): GatewayError {
  return new GatewayError("invalid_request", `${where} rejected the request: ${message}`, { code: "context_length_exceeded", cause });
}

/**
 * Decoders whose tool calling is off: vLLM's '"auto" tool choice requires --enable-auto-tool-choice
 * and --tool-call-parser to be set', llama-server's "tools param requires --jinja flag", Ollama's
 * "registry.ollama.ai/library/gemma:2b does not support tools".
 */
const TOOLS_OFF = /requires --enable-auto-tool-choice|tools param requires --jinja|does not support tools/i;

/** llama-server's "image input is not supported - hint: …" (and its audio counterpart). */
const UNREADABLE_INPUT = /\b(image|audio) input is not supported\b/i;

/**
 * Anthropic's words for an account that cannot pay, sent as a 400 invalid_request_error:
 * "Your credit balance is too low to access the Anthropic API. …" and "You have reached your
 * specified API usage limits. You will regain access on … UTC."
 */
const ANTHROPIC_ACCOUNT_LIMIT = /credit balance is too low|reached your specified API usage limits/i;

/** Anthropic's 429 for a long-context prompt on an account without extra usage (captured bodies, e.g.
 * anthropics/claude-code#42616): {"type":"error","error":{"type":"rate_limit_error","message":"Extra
 * usage is required for long context requests."}}. */
const ANTHROPIC_LONG_CONTEXT_GATE = /extra usage is required for long context/i;

/**
 * A prompt longer than the model's context, as Anthropic says it ("prompt is too long: 208310
 * tokens > 200000 maximum") and as local decoders say it (their `code` is the HTTP
 * status): llama-server's type `exceed_context_size_error`; vLLM's "This model's maximum context
 * length is … tokens" (the words OpenAI's own message uses) or, from its engine, "The decoder
 * prompt (length …) is longer than the maximum model length of …"; SGLang's "The input (N
 * tokens) is longer than the model's context length (M tokens)." and "Requested token count
 * exceeds the model's maximum context length".
 */
function exceedsContext(error: SdkError, message: string): boolean {
  return (
    errorType(error) === "exceed_context_size_error" ||
    /maximum context length|longer than the maximum model length|longer than the model's context length|prompt is too long: \d+ tokens > \d+ maximum/i.test(message)
  );
}

/** OpenAI's 429 `type` says what ran out ("requests", "tokens"): kept for the client. */
function rateLimitUnit(type: string | undefined): { rateLimitUnit?: RateLimitUnit } {
  return type === "requests" || type === "tokens" ? { rateLimitUnit: type } : {};
}

function errorType(error: SdkError): string | undefined {
  const body = error?.error as { type?: unknown; error?: { type?: unknown } | string; error_type?: unknown } | undefined;
  // `{"error": "text"}`: an error event with its message, and maybe a type beside it
  // (text-generation-inference: `{"error": "Model is overloaded", "error_type": "overloaded"}`).
  if (typeof body?.error === "string") return typeof body.error_type === "string" ? body.error_type : "error";
  const type = body?.error?.type ?? body?.type;
  return typeof type === "string" ? type : undefined;
}

/**
 * The HTTP status a local decoder puts in a streamed error's `code` (vLLM's
 * `{"type": "InternalServerError", "code": 500}`, llama-server's `{"type": "server_error", "code": 500}`).
 */
function streamedStatus(error: SdkError): number | undefined {
  const body = error?.error as { code?: unknown; error?: { code?: unknown } } | undefined;
  const code = body?.error?.code ?? body?.code;
  return typeof code === "number" && Number.isInteger(code) ? code : undefined;
}

function mapStreamedError(type: string, status: number | undefined, where: string, message: string, cause: unknown): GatewayError {
  // Retryable as their HTTP forms are: before the answer's first part, another target may answer.
  if (type === "overloaded_error" || type === "overloaded") return new GatewayError("unavailable", `${where} is overloaded: ${message}`, { code: OVERLOADED, retryable: true, cause });
  if (type === "rate_limit_error" || type === "rate_limit_exceeded" || status === 429) return new GatewayError("rate_limit", `${where} is rate limiting: ${message}`, { retryable: true, cause });
  if (type === "api_error" || type === "server_error" || (status !== undefined && status >= 500)) return new GatewayError("upstream", `${where} failed mid-stream: ${message}`, { retryable: true, cause });
  // A 4xx in the event's `code` (SGLang's BadRequestError 400) is the request's fault, as over HTTP.
  if (type === "invalid_request_error" || type === "validation" || (status !== undefined && status >= 400 && status < 500)) return new GatewayError("invalid_request", `${where} rejected the request: ${message}`, { cause });
  // An event with a message and nothing that says whose fault it is: as a cut stream, another
  // target may answer (before the answer's first part; after it, nothing is retried anyway).
  if (type === "error") return new GatewayError("upstream", `${where} failed mid-stream: ${message}`, { retryable: true, cause });
  return new GatewayError("upstream", `${where} failed mid-stream: ${message}`, { cause });
}

function upstreamCodeAndParam(error: SdkError, apiKey?: string): { code?: string; param?: string } {
  const body = error?.error as { code?: unknown; param?: unknown; error?: { code?: unknown; param?: unknown } } | undefined;
  const fields = body?.error ?? body;
  // Identifiers only, and none that quotes a key: a key is identifier-shaped too (sk-…), and a
  // code also becomes the record's errorType and the spans' error.type.
  const identifier = (value: unknown) =>
    typeof value === "string" && /^[\w.\[\]-]{1,100}$/.test(value) && redactSecrets(value, apiKey) === value ? value : undefined;
  const code = identifier(fields?.code);
  const param = identifier(fields?.param);
  return { ...(code ? { code } : {}), ...(param ? { param } : {}) };
}

/**
 * The longest provider message passed on. Real ones are a sentence or a list of fields (well
 * under 1 KB); a refusal whose body is not JSON (a proxy's HTML page, up to the 1 MiB that is
 * read of it) reaches here whole through the SDKs, and would be sent to the client and the log.
 */
export const MAX_PROVIDER_MESSAGE_CHARACTERS = 2_000;

function providerMessage(error: SdkError): string {
  const body = error?.error as { message?: unknown; error?: { message?: unknown } | string } | undefined;
  const message = typeof body?.error === "string" ? body.error : (body?.error?.message ?? body?.message ?? error?.message);
  if (typeof message !== "string" || message.length === 0) return "no message";
  if (message.length <= MAX_PROVIDER_MESSAGE_CHARACTERS) return message;
  return `${message.slice(0, MAX_PROVIDER_MESSAGE_CHARACTERS)}… (cut: the provider's message ran to ${message.length} characters)`;
}

function retryAfter(headers: SdkError["headers"]): number | undefined {
  const header = (name: string) => (headers instanceof Headers ? headers.get(name) : headers?.[name]);
  // Milliseconds, where a server says so (Azure OpenAI sends only this one; the SDKs read it first).
  const milliseconds = Number(header("retry-after-ms") || NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.ceil(milliseconds / 1000);
  const value = header("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function isTimeout(error: SdkError): boolean {
  return /timeout|timed out/i.test(`${error?.name} ${error?.message}`);
}

/** What a network failure was, in words that name no host: from its system error code where it has one. */
function networkFailureKind(error: unknown): string {
  const code = systemErrorCode(error);
  return (code && NETWORK_FAILURE_KINDS[code]) ?? "network error";
}

const NETWORK_FAILURE_KINDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_SOCKET: "connection closed",
  EPIPE: "connection closed",
};

/** The system error code of a failure or of its cause (fetch wraps undici's in `cause`). */
function systemErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** The transport's message with its causes' (fetch says "fetch failed", its cause says why). */
function transportMessage(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) messages.push(current.message);
  return messages.join(": ") || "connection failed";
}
