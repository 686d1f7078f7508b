import { describe, expect, it } from "vitest";
import { boundedBody, EventBound, EventTooLongError } from "./event-bound.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds the chunks to a bound of `limit` bytes; the index of the chunk it failed at, or -1. */
function failsAt(limit: number, chunks: string[]): number {
  const bound = new EventBound("local", limit);
  for (const [index, chunk] of chunks.entries()) {
    try {
      bound.see(bytes(chunk));
    } catch (error) {
      expect(error).toBeInstanceOf(EventTooLongError);
      return index;
    }
  }
  return -1;
}

describe("EventBound", () => {
  it("passes any number of events under the bound, however the reads split them", () => {
    const event = "data: 0123456789\n\n"; // 18 bytes
    expect(failsAt(18, [event.repeat(1000)])).toBe(-1);
    expect(failsAt(18, event.repeat(50).match(/.{1,7}/gs)!)).toBe(-1);
    // CRLF line ends, split anywhere: the 20-byte events end.
    expect(failsAt(20, ["data: 0123456789\r\n", "\r\n", "data: 0123456789\r", "\n\r", "\n", "data: 0123456789\r\n\r\n"])).toBe(-1);
  });

  it("fails on the read that leaves an unfinished event past the bound, whether it has line ends or not", () => {
    expect(failsAt(18, ["data: 0123456789\n\n", "data: 0123456789\n", "\n", "data: 0123456789\n"])).toBe(-1);
    expect(failsAt(18, ["data: 0123456789\n\n", "data: 0123456789\n", "xx"])).toBe(2);
    expect(failsAt(10, ["data: ", "xxxx", "x"])).toBe(2);
    // Many lines, no blank line: still one event, which the parsers keep whole.
    expect(failsAt(20, ["data: a\n", "data: b\n", "data: c\n"])).toBe(2);
    // An event that ends inside a read counts from there.
    expect(failsAt(20, ["data: a\n\ndata: b", "0123456789", "0123"])).toBe(2);
  });

  it("names the provider and the bound", () => {
    expect(() => new EventBound("vllm", 16 * 1024 * 1024).see(new Uint8Array(16 * 1024 * 1024 + 1))).toThrow('provider "vllm" sent a stream event longer than 16 MiB');
  });
});

describe("boundedBody", () => {
  /** What the SDK reads of a body that arrives in `reads`. */
  async function readsOf(reads: string[]): Promise<string[]> {
    const body = new ReadableStream<Uint8Array>({ start: (controller) => (reads.forEach((read) => controller.enqueue(bytes(read))), controller.close()) });
    const out: string[] = [];
    const reader = boundedBody(body, new EventBound("openai", 100)).getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(new TextDecoder().decode(read.value));
    return out;
  }

  it("passes each read on up to its last event's end, an unfinished event with the read that ends it", async () => {
    // The OpenAI SDK rescans all it holds of an event on every read: an event whole is one scan.
    expect(await readsOf(["data: a", "bc\n", "\ndata: d\n\nda", "ta: e\n\n", "data: f"])).toEqual(["data: abc\n\ndata: d\n\n", "data: e\n\n", "data: f"]);
  });
});
