/**
 * Shorter keys are placeholders for servers that check none (vLLM's documented "EMPTY",
 * "ollama", "none"): taken out wherever they stand, they would mangle ordinary words in messages
 * that tollgate itself reads. Any key is still taken out where it follows `Bearer` or `x-api-key:`.
 */
const SHORTEST_REDACTED_KEY = 8;

/**
 * The text a provider (or a proxy in front of it) answered, with tollgate's provider key taken
 * out wherever it is quoted: whole, after `Bearer` or `x-api-key:`, or masked as OpenAI's 401
 * does ("sk-proj-ab***wxyz" still names part of a key), and any URL's user and password.
 */
export function redactSecrets(text: string, apiKey?: string): string {
  let out = text;
  if (apiKey && apiKey.length >= SHORTEST_REDACTED_KEY) out = out.split(apiKey).join("[redacted]");
  // Whatever follows a credential header's name is a credential, whoever's it is.
  out = out.replace(/\b(bearer\s+|(?:x-)?api-key:\s*)(?!\[redacted\])[^\s"',;]+/gi, "$1[redacted]");
  out = out.replace(/\b(sk|sk-ant|sk-proj|tg)[-_][A-Za-z0-9_*\-]{4,}/g, "[redacted]");
  // Keys of other shapes (Groq's gsk_…, xAI's xai-…, a 32-character hex key) quoted in part: a
  // token that opens with the key's first 8 characters, or a masked one that ends with its last 4.
  if (apiKey && apiKey.length >= 2 * SHORTEST_REDACTED_KEY) {
    const head = escapeRegExp(apiKey.slice(0, SHORTEST_REDACTED_KEY));
    const tail = escapeRegExp(apiKey.slice(-4));
    out = out.replace(new RegExp(`${head}[^\\s"',;]*`, "g"), "[redacted]");
    out = out.replace(new RegExp(`[^\\s"',;]*[*…]+[^\\s"',;*…]*${tail}(?![A-Za-z0-9])`, "g"), "[redacted]");
  }
  // A transport's message may quote a URL with its user and password.
  return out.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1[redacted]@");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
