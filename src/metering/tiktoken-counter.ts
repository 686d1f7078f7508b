import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import type { TokenCounter } from "./token-counter.ts";

// js-tiktoken with o200k_base (the gpt-4o family's encoding), the one encoder the process keeps.
// Building it parses about a second's worth of ranks, so it is made once at start-up, never per
// request. For models on other tokenizers (Claude, Llama) its count is an estimate, which is all a
// record flagged `estimated` claims.

/** Text is encoded in slices of about this many characters... */
const SLICE_CHARS = 4096;
/** ...and the counter yields to the event loop after this much work, so no request waits longer. */
const MAX_BUSY_MS = 2;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createTiktokenCounter(): TokenCounter {
  const encoder = new Tiktoken(o200kBase);
  return {
    async count(text) {
      let tokens = 0;
      let busySince = performance.now();
      for (const slice of slices(text)) {
        // `[], []`: special-token text in user input ("<|endoftext|>") is counted as text, not thrown on.
        tokens += encoder.encode(slice, [], []).length;
        if (performance.now() - busySince > MAX_BUSY_MS) {
          await nextTurn();
          busySince = performance.now();
        }
      }
      return tokens;
    },
  };
}

/**
 * Longest run of non-whitespace, or of whitespace, encoded in one piece (a 128-char run of one
 * letter takes ~2 ms, 256 ~20 ms; a 4096-char run of spaces took 2.4 s, of U+00A0 12.7 s).
 */
const MAX_WORD_CHARS = 64;
const LONG_WORD = new RegExp(`\\S{${MAX_WORD_CHARS + 1},}|\\s{${MAX_WORD_CHARS + 1},}`, "g");

/**
 * Cuts text before a whitespace near every SLICE_CHARS characters, where BPE pre-tokenization
 * splits anyway, so slicing barely changes the count. Long runs without whitespace (base64,
 * minified code, "aaaa…") and long runs of whitespace (indentation, padding) are cut every
 * MAX_WORD_CHARS: js-tiktoken's merge loop is quadratic in a run's length, and one unbroken 4 kB
 * run would otherwise hold the event loop for seconds.
 */
export function* slices(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    if (end < text.length) {
      const lastSpace = text.lastIndexOf(" ", end);
      if (lastSpace > start + SLICE_CHARS / 2) end = lastSpace;
    }
    yield* cutLongWords(text.slice(start, end));
    start = end;
  }
}

function* cutLongWords(slice: string): Generator<string> {
  let from = 0;
  for (const match of slice.matchAll(LONG_WORD)) {
    if (match.index > from) yield slice.slice(from, match.index);
    for (let at = 0; at < match[0].length; at += MAX_WORD_CHARS) yield match[0].slice(at, at + MAX_WORD_CHARS);
    from = match.index + match[0].length;
  }
  if (from < slice.length) yield slice.slice(from);
}
