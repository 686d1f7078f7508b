// Checks the test rig itself: the real llama-server on the tiny model answers the way the rest
// of the suite relies on. Plain fetch only, no gateway code involved.
import { describe, it, expect, afterAll } from "vitest";
import { startLlamaServer, TINY_LOCAL_ANSWER, TINY_LOCAL_ANSWER_TOKENS, type LlamaServer } from "./support/llama-server.ts";

const decoder = await startLlamaServer();

function server(): LlamaServer {
  if ("skipped" in decoder) throw new Error(`unreachable: tests run only with a decoder (${decoder.skipped})`);
  return decoder;
}

async function chat(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${server().baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "tiny-local", messages: [{ role: "user", content: "Say something." }], ...body }),
  });
}

// Parses an SSE body into the JSON payloads of its "data:" lines, checking it ends with [DONE].
function sseChunks(body: string): Array<Record<string, any>> {
  const payloads = body
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
  expect(payloads.at(-1)).toBe("[DONE]");
  return payloads.slice(0, -1).map((payload) => JSON.parse(payload));
}

describe.skipIf("skipped" in decoder)("rig: real llama-server on the tiny model", () => {
  afterAll(() => server().stop());

  it("reports healthy and lists the tiny-local model", async () => {
    const health = await fetch(`${server().origin}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const models = (await (await fetch(`${server().baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toContain("tiny-local");
  });

  it("answers a non-streaming request with the fixed sentence and finish_reason stop", async () => {
    const response = await chat({ max_tokens: 32 });
    expect(response.status).toBe(200);
    const json = (await response.json()) as any;
    expect(json.choices[0].message.content).toBe(TINY_LOCAL_ANSWER);
    expect(json.choices[0].finish_reason).toBe("stop");
    expect(json.usage.completion_tokens).toBe(TINY_LOCAL_ANSWER_TOKENS);
    expect(json.usage.prompt_tokens).toBeGreaterThan(0);
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens);
  });

  it("streams the same sentence and ends with a usage chunk that has choices [] and timings", async () => {
    const response = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const chunks = sseChunks(await response.text());

    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe(TINY_LOCAL_ANSWER);
    const finishReasons = chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean);
    expect(finishReasons).toEqual(["stop"]);

    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toMatchObject({ completion_tokens: TINY_LOCAL_ANSWER_TOKENS });
    expect(usageChunk?.usage.prompt_tokens).toBeGreaterThan(0);
    expect(usageChunk?.timings).toMatchObject({
      prompt_n: expect.any(Number),
      prompt_ms: expect.any(Number),
      predicted_n: TINY_LOCAL_ANSWER_TOKENS,
      predicted_ms: expect.any(Number),
    });
  });

  it("stops at max_tokens with finish_reason length", async () => {
    const response = await chat({ max_tokens: 3 });
    const json = (await response.json()) as any;
    expect(json.choices[0].finish_reason).toBe("length");
    expect(json.usage.completion_tokens).toBe(3);
    expect(json.choices[0].message.content).toBe("Hello from a");
  });

  it("repeats the sentence until max_tokens when EOS is ignored", async () => {
    const response = await chat({ max_tokens: 20, ignore_eos: true });
    const json = (await response.json()) as any;
    expect(json.choices[0].finish_reason).toBe("length");
    expect(json.usage.completion_tokens).toBe(20);
    expect(json.choices[0].message.content).toMatch(new RegExp(`^(${escapeRegExp(TINY_LOCAL_ANSWER)}){2}`));
  });

  it("serves four requests at once (one per slot)", async () => {
    const responses = await Promise.all([1, 2, 3, 4].map(() => chat({ max_tokens: 32 })));
    const answers = await Promise.all(responses.map(async (r) => ((await r.json()) as any).choices[0].message.content));
    expect(answers).toEqual(Array(4).fill(TINY_LOCAL_ANSWER));
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
