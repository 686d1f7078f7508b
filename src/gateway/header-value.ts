/** Anything outside visible ASCII and space: HTTP header values cannot carry it as text. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/u;
const EACH_NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/gu;

/**
 * Makes tollgate's own header values safe to send. Route and provider names come from the config
 * and policy notes from the request, and may hold any character; Node refuses a header value
 * outside Latin-1 with an exception thrown after the provider was called (and billed), so such
 * characters are percent-encoded as UTF-8: a route named "摘要" is sent as "%E6%91%98%E8%A6%81".
 * The record and the stream's final event keep the names as written.
 */
export function safeHeaderValues(headers: Record<string, string>): Record<string, string> {
  for (const name in headers) {
    const value = headers[name]!;
    if (NOT_PRINTABLE_ASCII.test(value)) headers[name] = value.replace(EACH_NOT_PRINTABLE_ASCII, encodeCharacter);
  }
  return headers;
}

function encodeCharacter(character: string): string {
  try {
    return encodeURIComponent(character);
  } catch {
    return "%EF%BF%BD"; // a lone surrogate: U+FFFD, as a UTF-8 decoder would read it
  }
}
