import { safeHeaderValues } from "./header-value.ts";

/**
 * A JSON answer with its headers as one plain record. Every response carries the request id,
 * so it is written here rather than with `c.header()`: once Hono holds a prepared header, it
 * rebuilds each response's headers as a WHATWG Headers object, header by header (about 5% of the
 * gateway's CPU per answer in the benchmark), where @hono/node-server writes a plain record as is.
 */
export function jsonResponse(body: unknown, status: number, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...requestIdHeaders(requestId), ...safeHeaderValues(headers) },
  });
}

/**
 * The request id under tollgate's name and under the names the official SDKs read it by
 * (OpenAI's `x-request-id`, Anthropic's `request-id`): `_request_id` on an answer and `requestID`
 * on an error, which apps log and quote in support tickets.
 */
export function requestIdHeaders(requestId: string): Record<string, string> {
  return { "x-tollgate-request-id": requestId, "x-request-id": requestId, "request-id": requestId };
}
