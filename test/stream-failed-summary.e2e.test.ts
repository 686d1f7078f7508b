import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { summarizeRecord, type StreamSummary } from "../src/dialects/stream-summary.ts";
import { formatUsd } from "../src/pricing/format-usd.ts";
import { APP_KEY, readSseStream, useMockedGateway, waitForRecord } from "./support/gateway.ts";
import { wireTap } from "./support/wire-tap.ts";

// A stream that fails mid-way is billed (what the provider took, what it sent), and ends, like a
// complete one, with the summary comment of what it cost, after its error event. The official
// SDKs still throw the error (OpenAI's on the error chunk, Anthropic's on `event: error`) and skip
// the comment, their stream helpers too. Was: the error event ended the stream, and only the
// ledger knew what the cut stream cost.

const rig = useMockedGateway();

const openAIClient = (fetchImpl: typeof fetch) => new OpenAI({ baseURL: `${rig.gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0, fetch: fetchImpl });
const anthropicClient = (fetchImpl: typeof fetch) => new Anthropic({ baseURL: rig.gateway.url, apiKey: APP_KEY, maxRetries: 0, fetch: fetchImpl });

async function thrownBy(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the SDK to throw");
}

/**
 * The raw stream ends with the error event, then the summary comment and nothing else; the
 * summary is the record's, to the nano-dollar, and says it is estimated where the record is.
 */
async function expectSummaryOfRecord(rawBody: string, errorEvent: RegExp): Promise<StreamSummary> {
  const { text, summary } = await readSseStream(new Response(rawBody));
  expect(summary).toBeDefined();
  const blocks = text.trim().split("\n\n");
  expect(blocks.at(-1)).toBe(`: tollgate ${JSON.stringify(summary)}`);
  expect(blocks.at(-2)).toMatch(errorEvent);
  const record = await waitForRecord(rig.gateway, summary!.requestId);
  expect(record.status).toBe("error");
  expect(record.cost.totalNano).toBeGreaterThan(0);
  expect(summary!.costUsd).toBe(formatUsd(record.cost.totalNano));
  expect(summary).toEqual(summarizeRecord(record));
  return summary!;
}

describe("a stream the upstream fails mid-way ends with its summary, after the error the SDK throws", () => {
  it("OpenAI SDK, OpenAI upstream, iterating the stream: APIError thrown; the raw stream ends error chunk, then summary", async () => {
    rig.mocks.openai.enqueue({ kind: "stream-error", afterChunks: 2, message: "The server had an error while processing your request." });
    const tap = wireTap();
    const stream = await openAIClient(tap.fetch).chat.completions.create({ model: "gpt", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    const failure = await thrownBy(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    });
    expect(text).toBe("chunk0 chunk1");
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('provider "openai" failed mid-stream: The server had an error');
    const body = await tap.lastBody();
    expect(body).not.toContain("[DONE]");
    const summary = await expectSummaryOfRecord(body, /^data: \{"error":/);
    // No usage came from the provider: the prompt and "chunk0 chunk1" were counted by tollgate.
    expect(summary).toMatchObject({ route: "gpt", provider: "openai", estimated: true, outputTokens: 4 });
  });

  it("OpenAI SDK, Anthropic upstream overloaded mid-stream, through the stream helper: finalChatCompletion rejects with APIError", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 1 });
    const tap = wireTap();
    const stream = openAIClient(tap.fetch).chat.completions.stream({ model: "claude", messages: [{ role: "user", content: "hi" }] });
    const failure = await thrownBy(() => stream.finalChatCompletion());
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('provider "anthropic" is overloaded');
    const summary = await expectSummaryOfRecord(await tap.lastBody(), /^data: \{"error":/);
    // message_start reported the input; the output ("chunk0") was counted.
    expect(summary).toMatchObject({ route: "claude", provider: "anthropic", estimated: true });
    expect(summary.inputTokens).toBeGreaterThan(0);
  });

  it("Anthropic SDK, Anthropic upstream overloaded mid-stream, iterating the stream: `event: error` thrown; the summary follows it", async () => {
    rig.mocks.anthropic.enqueue({ kind: "stream-error", afterChunks: 2 });
    const tap = wireTap();
    const stream = await anthropicClient(tap.fetch).messages.create({ model: "claude", max_tokens: 50, messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    const failure = await thrownBy(async () => {
      for await (const event of stream) if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
    });
    expect(text).toBe("chunk0 chunk1");
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    const body = await tap.lastBody();
    expect(body).not.toContain("message_stop");
    const summary = await expectSummaryOfRecord(body, /^event: error\n/);
    expect(summary).toMatchObject({ route: "claude", provider: "anthropic", estimated: true, outputTokens: 4 });
  });

  it("Anthropic SDK, OpenAI upstream failing mid-stream, through the stream helper: finalMessage rejects with APIError", async () => {
    rig.mocks.openai.enqueue({ kind: "stream-error", afterChunks: 1, message: "boom" });
    const tap = wireTap();
    const stream = anthropicClient(tap.fetch).messages.stream({ model: "gpt", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    const failure = await thrownBy(() => stream.finalMessage());
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect((failure as Error).message).toContain("boom");
    const summary = await expectSummaryOfRecord(await tap.lastBody(), /^event: error\n/);
    expect(summary).toMatchObject({ route: "gpt", provider: "openai", estimated: true });
  });
});
