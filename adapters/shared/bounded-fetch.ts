import { BODY_BOUNDED, readWholeBody, MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from "./body-bound.ts";
import { boundedBody, EventBound, MAX_EVENT_BYTES } from "./event-bound.ts";

export type FetchBounds = { event: number; answer: number; errorBody: number };

const BOUNDS: FetchBounds = { event: MAX_EVENT_BYTES, answer: MAX_ANSWER_BYTES, errorBody: MAX_ERROR_BODY_BYTES };

/**
 * The fetch the SDKs are given, every body it answers bounded, since the SDKs read whatever comes:
 * - a 2xx that is not JSON, a stream's: each event at most MAX_EVENT_BYTES (boundedBody; the
 *   SDKs read a stream's body as SSE whatever its content type);
 * - a 2xx JSON answer: read whole, at most MAX_ANSWER_BYTES, past which its read fails with
 *   BodyTooLongError (a 502, billed: mapProviderError);
 * - a refusal: its first MAX_ERROR_BODY_BYTES, the body cut there (the SDKs build the error's
 *   message from it).
 * (readWholeBody: each of the last two is passed on as one read.)
 * Past a bound, the upstream body is cancelled, so its connection closes instead of sending on.
 * A response its transport read whole within the bounds (BODY_BOUNDED: src/node/undici-fetch.ts)
 * passes as it is, but for a stream's events. `fetch` undefined: the global one, looked up at each
 * call (a test's msw replaces it after the adapter is built).
 */
export function boundedFetch(fetchFn: typeof fetch | undefined, providerName: string, bounds: FetchBounds = BOUNDS): typeof fetch {
  return async function fetchBounded(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const response = await (fetchFn ?? globalThis.fetch)(input, init);
    // Not `instanceof Response`: @hono/node-server replaces the global Response, which fetch's is not.
    const streamed = response.ok && !response.headers.get("content-type")?.includes("json");
    if (!streamed && BODY_BOUNDED in response) return response;
    const body = response.body;
    if (!body) return response;
    const bounded = streamed
      ? boundedBody(body, new EventBound(providerName, bounds.event))
      : response.ok
        ? readWholeBody(body, bounds.answer, "fail")
        : readWholeBody(body, bounds.errorBody, "cut");
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
