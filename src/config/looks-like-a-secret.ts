// A provider key pasted where its variable's name goes ({"env": "gsk_…"}) passed the name
// pattern, and was then printed as a name: in the start-up error, in the start-up warning, and in
// the 503 every client of an optional provider got ("set gsk_… and restart tollgate").
// PRODUCT.md: provider keys never reach clients or logs.

/**
 * How keys begin: sk- (OpenAI; Anthropic's sk-ant-, DeepSeek, OpenRouter), sk_ (other services'
 * secret keys), Groq gsk_, xAI xai-, Google AIza, Perplexity pplx-, Cerebras csk-. Matched as
 * written, case and all: no variable's name begins so (a hyphen is in no name at all).
 */
const KEY_PREFIX = /^(sk-|sk_|gsk_|xai-|AIza|pplx-|csk-)/;

/**
 * The words of a variable's name are short (OPENAI_API_KEY, openai_key, AZURE_KEY_2); a key is a
 * long random run of letters and digits (Mistral's 32, Cohere's 40, Together's 64 hex digits).
 * So a run of 20 or more letters and digits, with no _ or - in it, that holds both lower-case
 * letters and digits, and reads as noise rather than words, is taken for a key. Words: cut at
 * every change of case or between letters and digits, a camelCase name falls into pieces of 3
 * or more characters on average (azure Open Ai Key Eastus 2: 3.5); a random key into pieces of
 * one or two (a B 3 x K 9 …). All-capital runs are left alone: OPENAIKEY2024PRODUCTION is an
 * odd name, but a name.
 */
const KEY_RUN_LENGTH = 20;
/** A run whose pieces average fewer characters than this reads as noise. */
const NOISE_PIECE_LENGTH = 2.5;
const PIECES = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+/g;

function hasKeyLikeRun(value: string): boolean {
  return value.split(/[^A-Za-z0-9]+/).some((run) => run.length >= KEY_RUN_LENGTH && /[a-z]/.test(run) && /[0-9]/.test(run) && run.length / (run.match(PIECES)?.length ?? 1) < NOISE_PIECE_LENGTH);
}

/** A value written as {"env": …} that is a secret itself (a provider key, or a URL) and not a variable's name. */
export function looksLikeASecret(value: string): boolean {
  return KEY_PREFIX.test(value) || value.includes("://") || hasKeyLikeRun(value);
}
