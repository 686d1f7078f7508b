import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { APP_KEY, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A stream the client leaves before any usage came is billed tollgate's own count of what came
// back (js-tiktoken, o200k_base). The model generated no more than the max_tokens it was sent, so
// a count above that (o200k is not Claude's tokenizer, nor a local model's) is held to it. Was:
// billed as counted, tokens the provider cannot have generated.
//
// The mocks stream "tick0 tick1 tick2 …" whatever max_tokens says: more than max_tokens 2 by o200k.
// Prices (bundled): gpt-4o $2.50 / $10 per 1M = 2,500 / 10,000 nano a token; claude-sonnet-4-6
// $3 / $15 = 3,000 / 15,000.

const rig = useMockedGateway();
const encoder = new Tiktoken(o200kBase);
const CAME_BACK = "tick0 tick1 tick2";

/** Streams `body` to `path`, reads until "tick2" has come, then leaves; the request's record. */
async function leaveAfterTick2(path: string, body: object) {
  const client = new AbortController();
  const response = await fetch(`${rig.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: client.signal,
  });
  const reader = response.body!.getReader();
  let received = "";
  while (!received.includes("tick2")) received += new TextDecoder().decode((await reader.read()).value);
  client.abort();
  return waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
}

describe("an estimated output count", () => {
  it("is held to the max_tokens sent (OpenAI, no usage at all)", async () => {
    expect(encoder.encode(CAME_BACK).length).toBe(6); // o200k's count, past max_tokens
    rig.mocks.openai.enqueue({ kind: "endless", delayMsBetweenChunks: 150 });
    const record = await leaveAfterTick2("/v1/chat/completions", { model: "gpt", stream: true, max_tokens: 2, messages: [{ role: "user", content: "Count for me" }] });
    // The prompt counted: 3 per message + the text + 3 to prime the reply.
    const inputTokens = 3 + encoder.encode("Count for me").length + 3;
    expect(record).toMatchObject({ status: "aborted", estimated: true, usage: { inputTokens, outputTokens: 2 } });
    // Was: inputTokens × 2,500 + 6 × 10,000.
    expect(record.cost.totalNano).toBe(inputTokens * 2_500 + 2 * 10_000);
  });

  it("is held to the max_tokens sent (Anthropic: message_start's input kept, its placeholder output replaced)", async () => {
    rig.mocks.anthropic.enqueue({ kind: "endless", delayMsBetweenChunks: 150 });
    const record = await leaveAfterTick2("/v1/messages", { model: "claude", stream: true, max_tokens: 2, messages: [{ role: "user", content: "Count for me" }] });
    // message_start: 3 input tokens (the mock bills a token a word), output 1, then the count held to 2.
    expect(record).toMatchObject({ status: "aborted", estimated: true, usage: { inputTokens: 3, outputTokens: 2 } });
    // Was: 3 × 3,000 + 6 × 15,000 = 99,000.
    expect(record.cost.totalNano).toBe(3 * 3_000 + 2 * 15_000); // 39,000
  });
});
