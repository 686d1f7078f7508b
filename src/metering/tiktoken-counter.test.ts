import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { createTiktokenCounter, cutLongRuns, MAX_ASCII_PIECE_BYTES, MAX_PIECE_BYTES, slices } from "./tiktoken-counter.ts";

const counter = createTiktokenCounter();

describe("the shared tiktoken counter", () => {
  it("counts o200k_base tokens, and special-token text as plain text", async () => {
    expect(await counter.count("Hello world")).toBe(2);
    expect(await counter.count("Hello from a real local decoder.")).toBe(7);
    // Would throw in js-tiktoken's default mode; a user may well paste this.
    expect(await counter.count("<|endoftext|> hi")).toBe(8);
    // Several texts are counted apart and summed.
    expect(await counter.count(["Hello world", "Hello world"])).toBe(4);
  });

  it("slices long text at whitespace and cuts unbroken runs, losing no character", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(500);
    const proseSlices = [...slices(prose)];
    expect(proseSlices.join("")).toBe(prose);
    expect(proseSlices.length).toBeGreaterThan(1);
    expect(proseSlices.slice(1).every((slice) => slice.startsWith(" "))).toBe(true);

    const run = "x".repeat(1000);
    const runPieces = [...slices(`a ${run} b`)].flatMap((slice) => [...cutLongRuns(slice)]);
    expect(runPieces.join("")).toBe(`a ${run} b`);
    expect(Math.max(...runPieces.map((piece) => piece.length))).toBe(MAX_ASCII_PIECE_BYTES);
  });

  it("never cuts a surrogate pair, between slices or inside a run", () => {
    const emoji = "😀".repeat(3000);
    const pieces = [...slices(emoji)].flatMap((slice) => [...cutLongRuns(slice)]);
    expect(pieces.join("")).toBe(emoji);
    expect(pieces.every((piece) => piece.length % 2 === 0 && piece.codePointAt(0) === 0x1f600)).toBe(true);
  });

  it("gives the event loop back while counting a huge prompt, and counts it like unsliced text", async () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(1400); // 63 kB: counted whole
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const counted = await counter.count(prose);
    expect(otherWorkRan).toBe(true); // it yielded at least once before finishing
    expect(counted).toBe(14_001); // what js-tiktoken gives for the whole text in one piece
    // 880 kB is counted from an even 64 kB sample: 195,982 against 196,001 whole (−0.01 %).
    expect(await counter.count(prose.repeat(14))).toBe(195_982);
  });

  it("counts an unbroken 200 kB run in bounded pieces (js-tiktoken is quadratic in a run's length)", async () => {
    let yields = 0;
    const tick = setInterval(() => yields++, 0);
    const counted = await counter.count("a".repeat(200_000));
    clearInterval(tick);
    expect(counted).toBe(25_000); // 8 tokens per 64-byte piece (8 letters a token, as whole)
    expect(yields).toBeGreaterThan(0);
  });

  it("cuts long runs of whitespace too (a 4096-space run took 2.4 s to encode in one piece)", async () => {
    for (const blank of [" ", "\u00a0", " \n"]) {
      const text = `Be brief.${blank.repeat(4096)}hi`;
      const pieces = [...slices(text)].flatMap((slice) => [...cutLongRuns(slice)]);
      expect(pieces.join("")).toBe(text);
      const longestBlankRun = Math.max(...pieces.map((piece) => Math.max(0, ...(piece.match(/\s+/g) ?? []).map((run) => new TextEncoder().encode(run).length))));
      // Pre-tokens of multi-byte characters cost the most to merge: they get the shorter limit.
      expect(longestBlankRun).toBe(blank === "\u00a0" ? MAX_PIECE_BYTES : MAX_ASCII_PIECE_BYTES);
    }
    // Every piece counted, none lost: 4096 spaces in 64-space pieces.
    expect(await counter.count(" ".repeat(4096))).toBe(64 * (await counter.count(" ".repeat(64))));
  });
});

describe("ordinary text under EXACT_BYTES", () => {
  // Pre-tokens are cut only past their limit, so text whose pre-tokens are all shorter (deep
  // indentation, URLs, stack traces) counts exactly what js-tiktoken counts for it whole. Cutting
  // every run of 32 bytes used to over-count these by 20–35 %.
  const whole = new Tiktoken(o200kBase);
  const texts = {
    "code indented 40 spaces": Array.from({ length: 200 }, (_, i) => `${" ".repeat(40)}value_${i} = compute(${i})\n`).join(""),
    "URLs of about 50 characters": Array.from({ length: 200 }, (_, i) => `see https://docs.example.com/guide/install/step-${i}.html now `).join(""),
    "Java stack frames": Array.from({ length: 200 }, (_, i) => `\tat com.example.billing.internal.InvoiceCalculatorServiceImpl.calculate${i}(InvoiceCalculatorServiceImpl.java:${i})\n`).join(""),
  };
  it.each(Object.entries(texts))("counts %s exactly", async (_name, text) => {
    expect(await counter.count(text)).toBe(whole.encode(text, [], []).length);
  });
});
