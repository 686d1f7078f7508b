// One error type for the whole gateway, with one status mapping. Dialect renderers turn it into
// OpenAI's or Anthropic's error body; nothing else decides what a client sees.

import type { Usage } from "../model/usage.ts";

export type ErrorKind =
  | "invalid_request" // 400: bad JSON, wrong types, a value out of range
  | "authentication" // 401: no key or an unknown key
  | "budget_exceeded" // 402
  | "permission" // 403: the key may not use this route
  | "not_found" // 404: unknown route or path
  | "method_not_allowed" // 405: a served path, another method
  | "request_timeout" // 408: the request did not arrive whole in time (Node)
  | "request_too_large" // 413
  | "unsupported_media_type" // 415: a compressed request body
  | "headers_too_large" // 431: a header block over what Node reads
  | "rate_limit" // 429
  | "internal" // 500: a bug in tollgate
  | "not_implemented" // 501: this runtime does not offer the endpoint (reports on Workers)
  | "upstream" // 502: the provider failed or answered something unusable
  | "unavailable" // 503: the provider is not configured (missing key) or overloaded
  | "timeout"; // 504

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  budget_exceeded: 402,
  permission: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  request_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limit: 429,
  internal: 500,
  not_implemented: 501,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
};

/** The code of a provider too busy to answer (HTTP 503, Anthropic's 529): Anthropic's dialect answers it with 529. */
export const OVERLOADED = "overloaded";

export type RateLimitUnit = "requests" | "tokens";

export type GatewayErrorOptions = {
  /** The request field at fault, e.g. `messages[1].content`. */
  param?: string;
  /** A machine-readable code, e.g. `budget_exceeded`, `rate_limit_exceeded`. */
  code?: string;
  /** Seconds the client should wait before retrying (429/503). */
  retryAfterSeconds?: number;
  /**
   * What a rate limit counted, where known: tollgate's own rpm or tpm, or an OpenAI provider's 429
   * `type`. OpenAI's 429 says it as its `type` ("requests", "tokens"); Anthropic's is always `rate_limit_error`.
   */
  rateLimitUnit?: RateLimitUnit;
  /** True when trying another target could succeed (429, 5xx, network). */
  retryable?: boolean;
  /**
   * The client's retry of the same request cannot succeed until tollgate's config or the
   * provider account changes (a missing or rejected provider key, an account out of credit).
   * The answer then says `x-should-retry: false`, which both official SDKs obey instead of
   * retrying a 5xx, each retry a failed request and a record of its own.
   */
  permanent?: boolean;
  /** The provider took the call before it failed, and bills it: see BilledCall. */
  billed?: BilledCall;
  /**
   * A route's own rule refused the request (a policy's `"onUnsupported": "reject"`), not what one
   * target can do: the router answers it as it is, instead of trying the route's next target.
   */
  routeRule?: boolean;
  /** Anthropic's `error.details`, which its SDK acts on (e.g. `thread_unsupported_request`). */
  details?: Record<string, unknown>;
  /** For the gateway's log only, never the client: what the operator needs and a client may not see (an internal address). */
  logDetail?: string;
  cause?: unknown;
};

/**
 * A call the provider accepted (it answered 200 and began, or reported usage) before it failed:
 * cut by a deadline, cut short by the engine (vLLM's "abort"), or its connection lost. The
 * provider read the prompt, so the call is billed: `usage` where the provider reported it,
 * else tollgate's count of the prompt. A refusal (429, 5xx, an error event) is not billed.
 */
export type BilledCall = {
  usage?: Usage;
  /**
   * What the stream's opening said of the call, which its price follows: the model that answered,
   * where inference ran (Anthropic's "us" is 1.1×), the tier that served it (OpenAI's priority).
   */
  answeredAs?: { model?: string; inferenceGeo?: string; serviceTier?: string };
};

export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly param?: string;
  readonly code?: string;
  readonly retryAfterSeconds?: number;
  readonly rateLimitUnit?: RateLimitUnit;
  readonly retryable: boolean;
  readonly permanent: boolean;
  readonly details?: Record<string, unknown>;
  readonly logDetail?: string;
  readonly routeRule: boolean;
  /** Set where the call was billed; the router adds the usage a stream's preamble reported. */
  billed?: BilledCall;

  constructor(kind: ErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "GatewayError";
    this.kind = kind;
    this.status = STATUS[kind];
    this.param = options.param;
    this.code = options.code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.rateLimitUnit) this.rateLimitUnit = options.rateLimitUnit;
    this.retryable = options.retryable ?? false;
    this.permanent = options.permanent ?? false;
    this.routeRule = options.routeRule ?? false;
    if (options.billed) this.billed = options.billed;
    if (options.details) this.details = options.details;
    if (options.logDetail) this.logDetail = options.logDetail;
  }
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  // Never echo an arbitrary exception's message: it may hold a URL or a credential.
  return new GatewayError("internal", "tollgate hit an internal error; see the gateway log", { cause: error });
}
