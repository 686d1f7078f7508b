import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import type { TokenCounter } from "./token-counter.ts";
import { utf8Length, utf8Width } from "../runtime/utf8-length.ts";

// js-tiktoken with o200k_base (the gpt-4o family's encoding), the one encoder the process keeps.
// Building it parses about a second's worth of ranks, so it is made once at start-up, never per
// request. For models on other tokenizers (Claude, Llama) its count is an estimate, which is all a
// record flagged `estimated` claims.
//
// js-tiktoken's merge loop costs about the square of a piece's UTF-8 bytes, and every piece its
// rank table does not hold whole (CJK, emoji, Cyrillic, runs of U+3000) pays it: 64 characters
// of U+3000 (192 bytes) cost about 15 s per MB, against 0.3 s for English prose. So pre-tokens
// are cut at 32 bytes (64 for ASCII), and a text's tokens are counted exactly only up to
// EXACT_BYTES: past that an even sample of that size is counted and scaled to the whole text,
// which bounds one count's work whatever a client sends.

/** Text is cut before a whitespace near every this many characters: the unit of the sample... */
const SLICE_CHARS = 1024;
/** ...texts up to this many UTF-8 bytes are counted whole, longer ones from a sample this big. */
export const EXACT_BYTES = 64 * 1024;
/**
 * Longest pre-token encoded in one piece: 32 bytes where it holds multi-byte characters, whose
 * merges cost the most, 64 where it is ASCII (a 40-space indent, a long identifier).
 */
export const MAX_PIECE_BYTES = 32;
export const MAX_ASCII_PIECE_BYTES = 64;
/** The counter yields to the event loop after this much work, so no request waits longer. */
const MAX_BUSY_MS = 2;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createTiktokenCounter(): TokenCounter {
  const encoder = new Tiktoken(o200kBase);
  return {
    async count(texts) {
      const { pieces, scale } = piecesToEncode([texts].flat());
      let tokens = 0;
      let busySince = performance.now();
      for (const piece of pieces) {
        // `[], []`: special-token text in user input ("<|endoftext|>") is counted as text, not thrown on.
        tokens += encoder.encode(piece, [], []).length;
        if (performance.now() - busySince > MAX_BUSY_MS) {
          await nextTurn();
          busySince = performance.now();
        }
      }
      return Math.round(tokens * scale);
    },
  };
}

/**
 * What `count` encodes, and the factor from their tokens to the texts': all of the texts when
 * they hold up to EXACT_BYTES together, else slices spread evenly through them (a prompt that
 * changes language halfway is sampled in both) until about EXACT_BYTES are taken.
 */
export function piecesToEncode(texts: readonly string[]): { pieces: string[]; scale: number } {
  const totalBytes = texts.reduce((sum, text) => sum + utf8Length(text), 0);
  const share = Math.min(1, EXACT_BYTES / totalBytes);
  const pieces: string[] = [];
  let seenBytes = 0;
  let takenBytes = 0;
  for (const text of texts) {
    for (const slice of slices(text)) {
      const bytes = utf8Length(slice);
      seenBytes += bytes;
      // Take a slice whenever the sample has fallen behind its share of what has gone by.
      if (takenBytes >= seenBytes * share) continue;
      takenBytes += bytes;
      pieces.push(...cutLongRuns(slice));
    }
  }
  return { pieces, scale: takenBytes > 0 ? totalBytes / takenBytes : 1 };
}

/**
 * Cuts text near every SLICE_CHARS characters before a space that starts a word (" word" is one
 * pre-token, and the whitespace before it another), where BPE pre-tokenization splits anyway, so
 * slicing does not change the count; never inside a surrogate pair.
 */
export function* slices(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    if (end < text.length) {
      // Searched in the slice only: searching the whole text back from `end` scans a text without
      // spaces to its start for every slice, quadratic in its length (2.5 s for 4 MB of base64).
      const wordStart = lastWordStart(text.slice(start, end + 1));
      if (wordStart > SLICE_CHARS / 2) end = start + wordStart;
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    }
    yield text.slice(start, end);
    start = end;
  }
}

/** The last index of a space followed by something other than whitespace, or -1. */
function lastWordStart(window: string): number {
  for (let at = window.length - 2; at >= 0; at--) {
    if (window.charCodeAt(at) === 0x20 && !/\s/.test(window[at + 1]!)) return at;
  }
  return -1;
}

/** The encoding's own pre-tokenizer: the pieces js-tiktoken merges one by one. */
const PRE_TOKEN = new RegExp(o200kBase.pat_str, "gu");

/**
 * Pre-tokens over their limit (a run of one letter, of U+3000, CJK without spaces, long padding)
 * are cut into pieces that size; every other one stays as the encoder would have it, so ordinary
 * text (indented code, URLs, words with their leading space) counts exactly as a whole encode.
 */
export function* cutLongRuns(slice: string): Generator<string> {
  let from = 0;
  for (const match of slice.matchAll(PRE_TOKEN)) {
    const token = match[0];
    if (token.length <= MAX_PIECE_BYTES / 3) continue; // 3 bytes per UTF-16 unit at most: short
    const limit = isAscii(token) ? MAX_ASCII_PIECE_BYTES : MAX_PIECE_BYTES;
    if (utf8Length(token) <= limit) continue;
    if (match.index > from) yield slice.slice(from, match.index);
    yield* cutRun(token, limit);
    from = match.index + token.length;
  }
  if (from < slice.length) yield slice.slice(from);
}

function* cutRun(run: string, limit: number): Generator<string> {
  let start = 0;
  let bytes = 0;
  for (let at = 0; at < run.length; ) {
    const code = run.codePointAt(at)!;
    if (bytes + utf8Width(code) > limit) {
      yield run.slice(start, at);
      start = at;
      bytes = 0;
    }
    bytes += utf8Width(code);
    at += code > 0xffff ? 2 : 1;
  }
  yield run.slice(start);
}

const isAscii = (text: string) => !/[^\x00-\x7f]/.test(text);

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
