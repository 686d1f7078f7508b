import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../model/chat-request.ts";
import { createTiktokenCounter, EXACT_BYTES, MAX_ASCII_PIECE_BYTES, MAX_PIECE_BYTES, piecesToEncode } from "./tiktoken-counter.ts";
import { utf8Length } from "../runtime/utf8-length.ts";
import { countRequestTokens, type TokenCounter } from "./token-counter.ts";

// How much work one count may hand js-tiktoken, whatever a client sends (the counter runs on every
// request of an Anthropic promptCache route and for every stream a client aborts before usage):
// no piece holds a pre-token (what js-tiktoken merges as one) over MAX_PIECE_BYTES (ASCII:
// MAX_ASCII_PIECE_BYTES), and no count encodes much more than EXACT_BYTES.
// Was: runs were cut at 64 UTF-16 units (192 bytes of U+3000) and every byte was encoded, so
// 512 kB of U+3000 took 8 s of CPU (js-tiktoken's cost grows with the square of a piece's bytes).

const KB512 = 512 * 1024;
const pathological: Record<string, string> = {
  "U+3000": "\u3000".repeat(KB512 / 3),
  "U+00A0": "\u00a0".repeat(KB512 / 2),
  CJK: "漢字仮名交じり文中文字符测试".repeat(KB512 / 42),
  emoji: "😀🎉👍🔥".repeat(KB512 / 16),
  Cyrillic: "Съешьжеещёэтихмягкихфранцузскихбулок".repeat(KB512 / 64),
  base64: "QmFzZTY0IGVuY29kZWQgdGV4dCBnb2VzIGhlcmUr/=".repeat(KB512 / 42),
};
/** The pre-tokens js-tiktoken would merge one by one when it encodes `piece`, over their limit. */
const overLimit = (piece: string) =>
  (piece.match(new RegExp(o200kBase.pat_str, "gu")) ?? []).filter((token) => utf8Length(token) > (/^[\x00-\x7f]*$/.test(token) ? MAX_ASCII_PIECE_BYTES : MAX_PIECE_BYTES));
/** One slice may overshoot the sample: 1024 UTF-16 units of at most 3 bytes each. */
const SLICE_BYTES = 3 * 1024;

describe("counting a prompt's tokens", () => {
  it.each(Object.entries(pathological))("hands js-tiktoken 512 kB of %s in bounded pieces, and about EXACT_BYTES of them", (_kind, text) => {
    const { pieces, scale } = piecesToEncode([text]);
    expect(pieces.flatMap(overLimit)).toEqual([]);
    const encodedBytes = pieces.reduce((sum, piece) => sum + utf8Length(piece), 0);
    expect(encodedBytes).toBeLessThanOrEqual(EXACT_BYTES + SLICE_BYTES);
    // The count is scaled back to the whole text.
    expect(encodedBytes * scale).toBeCloseTo(utf8Length(text), 6);
  });

  it("counts 512 kB of U+3000 from its sample, scaled to the whole text", async () => {
    const counter = createTiktokenCounter();
    // 10 characters (30 bytes) per piece are 2 tokens: 174_762 characters are 34_952 tokens, and a
    // few more where a slice boundary leaves a shorter piece.
    expect(await counter.count(pathological["U+3000"]!)).toBe(34_987);
  });

  it("counts a text up to EXACT_BYTES whole, with no scaling", () => {
    const text = "Hello world. ".repeat(Math.floor(EXACT_BYTES / 13));
    const { pieces, scale } = piecesToEncode([text]);
    expect({ text: pieces.join(""), scale }).toEqual({ text, scale: 1 });
  });

  it("bounds a whole request, not each message: a request's texts go to the counter in one call", async () => {
    const calls: (string | readonly string[])[] = [];
    const spy: TokenCounter = { count: async (texts) => (calls.push(texts), 0) };
    const messages = Array.from({ length: 64 }, () => ({ role: "user" as const, content: [{ type: "text" as const, text: pathological.CJK!.slice(0, 20_000) }] }));
    await countRequestTokens(spy, { route: "gpt", stream: false, streamUsage: false, messages } satisfies ChatRequest);
    expect(calls).toHaveLength(1);
    const { pieces } = piecesToEncode(calls[0] as string[]);
    expect(pieces.reduce((sum, piece) => sum + utf8Length(piece), 0)).toBeLessThanOrEqual(EXACT_BYTES + SLICE_BYTES);
  });
});
