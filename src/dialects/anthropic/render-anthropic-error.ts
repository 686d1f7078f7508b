import type { GatewayError } from "../../errors/gateway-error.ts";

const TYPE_BY_KIND: Record<GatewayError["kind"], string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  budget_exceeded: "billing_error",
  permission: "permission_error",
  not_found: "not_found_error",
  method_not_allowed: "invalid_request_error",
  request_timeout: "invalid_request_error",
  request_too_large: "request_too_large",
  unsupported_media_type: "invalid_request_error",
  headers_too_large: "request_too_large",
  rate_limit: "rate_limit_error",
  internal: "api_error",
  not_implemented: "api_error",
  upstream: "api_error",
  unavailable: "overloaded_error",
  timeout: "timeout_error",
};

/** `requestId`: the answer's, which Anthropic's error bodies carry as `request_id` (an SSE error event has none). */
export function renderAnthropicError(error: GatewayError, requestId?: string) {
  // A provider tollgate has no key for is not overloaded: Anthropic's SDK and agents read
  // overloaded_error as "wait and retry".
  const type = error.code === "provider_unavailable" ? "api_error" : TYPE_BY_KIND[error.kind];
  return {
    type: "error" as const,
    error: { type, message: error.message, ...(error.details ? { details: error.details } : {}) },
    ...(requestId ? { request_id: requestId } : {}),
  };
}
