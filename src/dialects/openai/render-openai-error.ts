import type { GatewayError } from "../../errors/gateway-error.ts";

const TYPE_BY_KIND: Record<GatewayError["kind"], string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  budget_exceeded: "insufficient_quota",
  permission: "permission_error",
  not_found: "invalid_request_error",
  method_not_allowed: "invalid_request_error",
  request_timeout: "invalid_request_error",
  request_too_large: "invalid_request_error",
  unsupported_media_type: "invalid_request_error",
  headers_too_large: "invalid_request_error",
  // A 429 that does not say what it counted (an Anthropic provider's, passed on); see renderOpenAIError.
  rate_limit: "rate_limit_error",
  internal: "server_error",
  not_implemented: "server_error",
  upstream: "server_error",
  unavailable: "server_error",
  timeout: "server_error",
};

const DEFAULT_CODE: Partial<Record<GatewayError["kind"], string>> = {
  budget_exceeded: "budget_exceeded",
  not_found: "model_not_found",
  method_not_allowed: "method_not_allowed",
  rate_limit: "rate_limit_exceeded",
  request_too_large: "request_too_large",
};

export function renderOpenAIError(error: GatewayError) {
  return {
    error: {
      message: error.message,
      // OpenAI's 429 names what ran out as its type: "requests" (RPM) or "tokens" (TPM), as
      // tollgate's own rpm and tpm refusals and an OpenAI provider's 429 do.
      type: (error.kind === "rate_limit" && error.rateLimitUnit) || TYPE_BY_KIND[error.kind],
      param: error.param ?? null,
      code: error.code ?? DEFAULT_CODE[error.kind] ?? null,
    },
  };
}
