import { describe, expect, it } from "vitest";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { streamWithoutRepeatedPrefill, withoutRepeatedPrefill } from "./repeated-prefill.ts";

/** The parts given, with what was read and what came out in the order it happened. */
async function run(parts: StreamPart[], prefill: string): Promise<{ out: StreamPart[]; log: string[] }> {
  const log: string[] = [];
  async function* source(): AsyncGenerator<StreamPart> {
    for (const part of parts) {
      log.push(`read ${part.type === "text-delta" ? part.text : part.type}`);
      yield part;
    }
  }
  const out: StreamPart[] = [];
  for await (const part of streamWithoutRepeatedPrefill(source(), prefill)) {
    log.push(`gave ${part.type === "text-delta" ? part.text : part.type}`);
    out.push(part);
  }
  return { out, log };
}

const text = (value: string): StreamPart => ({ type: "text-delta", text: value });
const finish: StreamPart = { type: "finish", reason: "stop" };

describe("streamWithoutRepeatedPrefill", () => {
  it("gives text that differs from the prefill as soon as it differs, without reading on", async () => {
    const { log } = await run([text("Hi"), text(" there"), finish], "{");
    expect(log).toEqual(["read Hi", "gave Hi", "read  there", "gave  there", "read finish", "gave finish"]);
  });

  it("holds text only while it reads like the prefill, then drops the prefill across parts", async () => {
    const logprobs = [{ token: 'a"', logprob: -0.1, bytes: null, top_logprobs: [] }];
    const { out, log } = await run([{ type: "start", id: "c", model: "m" }, text("{"), { type: "text-delta", text: '"a"', logprobs }, text(": 1}"), finish], '{"');
    expect(log.slice(0, 5)).toEqual(["read start", "gave start", "read {", 'read "a"', 'gave a"']);
    expect(out.slice(1, 3)).toEqual([{ type: "text-delta", text: 'a"', logprobs }, text(": 1}")]);
  });

  it("gives held text as it came when the answer ends, or something else comes, before the prefill is whole", async () => {
    expect((await run([text("To"), finish], "Tom: ")).out).toEqual([text("To"), finish]);
    const call: StreamPart = { type: "tool-call-start", index: 0, id: "call_1", name: "f" };
    expect((await run([text("To"), call], "Tom: ")).out).toEqual([text("To"), call]);
  });

  it("leaves the stream alone without a prefill, and an answer that is the prefill alone without text", async () => {
    expect((await run([text("{"), finish], "")).out).toEqual([text("{"), finish]);
    expect((await run([text("{"), finish], "{")).out).toEqual([finish]);
  });
});

describe("withoutRepeatedPrefill", () => {
  const answer = (value: string) => ({ id: "c", model: "m", content: [{ type: "text" as const, text: value }], finishReason: "stop" as const });

  it("takes a repeated prefill off the front, and leaves an answer that carries on from it", () => {
    expect(withoutRepeatedPrefill(answer('{"a": 1}'), "{").content).toEqual([{ type: "text", text: '"a": 1}' }]);
    expect(withoutRepeatedPrefill(answer('"a": 1}'), "{").content).toEqual([{ type: "text", text: '"a": 1}' }]);
    expect(withoutRepeatedPrefill(answer("{"), "{").content).toEqual([]);
  });
});
