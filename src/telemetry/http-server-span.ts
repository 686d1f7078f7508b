import type { Attributes } from "@opentelemetry/api";

// The SERVER span's name and attributes, as the HTTP semantic conventions give them
// (semconv docs/http/http-spans.md, "HTTP server span").

/** RFC 9110's methods and PATCH (RFC 5789): the ones the conventions record as themselves. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);

/**
 * `route`: the path's template where the gateway serves it (its paths have no parameters, so the
 * path itself), else undefined: an unknown path must not name the span, or every scanner's probe
 * would make a span name of its own.
 */
export function httpServerSpan(method: string, path: string, route: string | undefined, url: string): { name: string; attributes: Attributes } {
  const known = KNOWN_METHODS.has(method);
  // Any other method is `_OTHER` (its own words kept apart): the attribute stays low-cardinality.
  const recordedMethod = known ? method : "_OTHER";
  const attributes: Attributes = {
    "http.request.method": recordedMethod,
    "url.path": path,
    "url.scheme": url.slice(0, url.indexOf(":")),
  };
  if (!known) attributes["http.request.method_original"] = method;
  if (route !== undefined) attributes["http.route"] = route;
  const verb = known ? method : "HTTP";
  return { name: route !== undefined ? `${verb} ${route}` : verb, attributes };
}
