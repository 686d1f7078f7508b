import { describe, expect, it } from "vitest";
import { createTiktokenCounter, slices } from "./tiktoken-counter.ts";

const counter = createTiktokenCounter();

describe("the shared tiktoken counter", () => {
  it("counts o200k_base tokens, and special-token text as plain text", async () => {
    expect(await counter.count("Hello world")).toBe(2);
    expect(await counter.count("Hello from a real local decoder.")).toBe(7);
    // Would throw in js-tiktoken's default mode; a user may well paste this.
    expect(await counter.count("<|endoftext|> hi")).toBe(8);
  });

  it("slices long text at whitespace and cuts unbroken runs, losing no character", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(500);
    const proseSlices = [...slices(prose)];
    expect(proseSlices.join("")).toBe(prose);
    expect(proseSlices.length).toBeGreaterThan(1);
    expect(proseSlices.slice(1).every((slice) => slice.startsWith(" "))).toBe(true);

    const run = "x".repeat(1000);
    const runSlices = [...slices(`a ${run} b`)];
    expect(runSlices.join("")).toBe(`a ${run} b`);
    expect(Math.max(...runSlices.map((slice) => slice.length))).toBeLessThanOrEqual(64);
  });

  it("gives the event loop back while counting a huge prompt, and counts it like unsliced text", async () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(20_000); // 900 kB
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const counted = await counter.count(prose);
    expect(otherWorkRan).toBe(true); // it yielded at least once before finishing
    expect(counted).toBe(200_001); // what js-tiktoken gives for the whole text in one piece
  });

  it("counts an unbroken 200 kB run in bounded pieces (js-tiktoken is quadratic in a run's length)", async () => {
    let yields = 0;
    const tick = setInterval(() => yields++, 0);
    const counted = await counter.count("a".repeat(200_000));
    clearInterval(tick);
    expect(counted).toBe(25_000); // 8 tokens per 64-character piece
    expect(yields).toBeGreaterThan(0);
  });

  it("cuts long runs of whitespace too (a 4096-space run took 2.4 s to encode in one piece)", async () => {
    for (const blank of [" ", "\u00a0", " \n"]) {
      const text = `Be brief.${blank.repeat(4096)}hi`;
      const pieces = [...slices(text)];
      expect(pieces.join("")).toBe(text);
      const longestBlankRun = Math.max(...pieces.map((piece) => Math.max(0, ...(piece.match(/\s+/g) ?? []).map((run) => run.length))));
      expect(longestBlankRun).toBeLessThanOrEqual(64);
    }
    // Every piece counted, none lost: 4096 spaces in 64-space pieces.
    expect(await counter.count(" ".repeat(4096))).toBe(64 * (await counter.count(" ".repeat(64))));
  });
});
