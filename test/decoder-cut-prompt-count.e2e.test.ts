import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROMPT_COUNTED_BY_DECODER } from "../src/metering/decoder-prompt-count.ts";
import { createTiktokenCounter } from "../src/metering/tiktoken-counter.ts";
import { countRequestTokens } from "../src/metering/token-counter.ts";
import type { ChatRequest } from "../src/model/chat-request.ts";
import { APP_KEY, startTestGateway, testConfig, waitForRecord, type TestGateway } from "./support/gateway.ts";
import { startHoldingProxy, type HoldingProxy } from "./support/holding-proxy.ts";
import { startLlamaServer, type LlamaServer } from "./support/llama-server.ts";

// A REAL llama-server's stream cut before its usage chunk: the record bills the prompt as
// llama-server counts it (its chat template and tokenizer, asked once the client has gone), not
// tollgate's o200k estimate with OpenAI's framing. Was: 1,207 tokens billed where llama-server
// read 1,822. A decoder gone by then is counted for as before, and the record says `estimated`.

const decoder = await startLlamaServer();

const system = "You answer in one short sentence.";
const user = "What is the capital of France, and why is it famous?";
const messages = [
  { role: "system", content: system },
  { role: "user", content: user },
];
// $2 and $8 per 1M tokens: 2,000 and 8,000 nano-dollars a token.
const pricing = { default: { inputPerMillion: 2, outputPerMillion: 8 } };

describe.skipIf("skipped" in decoder)("a local decoder's stream cut before its usage", () => {
  let gateway: TestGateway;
  let held: HoldingProxy;
  let gone: HoldingProxy;

  beforeAll(async () => {
    if ("skipped" in decoder) return;
    held = await startHoldingProxy(decoder.origin);
    gone = await startHoldingProxy(decoder.origin);
    const base = testConfig();
    gateway = await startTestGateway(
      {
        ...base,
        providers: {
          ...base.providers,
          held: { type: "openai-compatible", baseUrl: held.baseUrl, pricing },
          gone: { type: "openai-compatible", baseUrl: gone.baseUrl, pricing },
        },
        routes: { ...base.routes, held: { targets: [{ provider: "held", model: "tiny-local" }] }, gone: { targets: [{ provider: "gone", model: "tiny-local" }] } },
      },
      "undici",
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await held?.close();
    await gone?.close();
    if (!("skipped" in decoder)) await decoder.stop();
  });

  /** A stream through the gateway, read up to its first content delta; `reader` reads on. */
  async function streamToFirstContent(route: string) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: route, messages, stream: true, max_tokens: 64, temperature: 0 }),
    });
    if (response.status !== 200) throw new Error(await response.text());
    const reader = response.body!.getReader();
    const text = new TextDecoder();
    let seen = "";
    while (!/"content":"[^"]/.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any content: ${seen}`);
      seen += text.decode(value, { stream: true });
    }
    return { requestId: response.headers.get("x-tollgate-request-id")!, reader };
  }

  it("cut by the client after the first delta: the prompt's tokens are llama-server's own count, priced exactly", async () => {
    // What llama-server itself bills this prompt, asked of it directly (nothing cached yet).
    const direct = await fetch(`${(decoder as LlamaServer).origin}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-local", messages, max_tokens: 1, cache_prompt: false }),
    });
    const { usage } = (await direct.json()) as { usage: { prompt_tokens: number } };
    const estimate = await tiktokenEstimate();
    expect(usage.prompt_tokens).not.toBe(estimate); // else this test could not tell them apart

    const { requestId, reader } = await streamToFirstContent("held");
    await reader.cancel();
    const record = await waitForRecord(gateway, requestId);
    expect(record).toMatchObject({ provider: "held", status: "aborted", usage: { inputTokens: usage.prompt_tokens, cacheReadTokens: 0 } });
    // The output that arrived is still tollgate's count: the record stays estimated, and says the prompt was not.
    expect(record.usage.outputTokens).toBeGreaterThan(0);
    expect(record.estimated).toBe(true);
    expect(record.warnings).toContain(PROMPT_COUNTED_BY_DECODER);
    expect(record.cost.inputNano).toBe(usage.prompt_tokens * 2_000);
    expect(record.cost.outputNano).toBe(record.usage.outputTokens * 8_000);
    expect(record.cost.totalNano).toBe(usage.prompt_tokens * 2_000 + record.usage.outputTokens * 8_000);
  });

  it("the decoder gone when the record is made: tollgate's own count, flagged estimated", async () => {
    const { requestId, reader } = await streamToFirstContent("gone");
    // The decoder's address refuses connections from here on: its stream is cut mid-answer.
    await gone.close();
    let rest = "";
    for (let read = await reader.read(); !read.done; read = await reader.read()) rest += new TextDecoder().decode(read.value);
    expect(rest).toContain('"error"');
    const record = await waitForRecord(gateway, requestId);
    const estimate = await tiktokenEstimate();
    expect(record).toMatchObject({ provider: "gone", status: "error", estimated: true, usage: { inputTokens: estimate } });
    expect(record.warnings).not.toContain(PROMPT_COUNTED_BY_DECODER);
    expect(record.cost.inputNano).toBe(estimate * 2_000);
  });
});

let counter: ReturnType<typeof createTiktokenCounter> | undefined;

/** tollgate's own estimate of the prompt: o200k with OpenAI's message framing. */
function tiktokenEstimate(): Promise<number> {
  counter ??= createTiktokenCounter(); // about a second to build: once
  const request: ChatRequest = {
    route: "held",
    stream: true,
    streamUsage: false,
    messages: [
      { role: "system", content: system },
      { role: "user", content: [{ type: "text", text: user }] },
    ],
  };
  return countRequestTokens(counter, request);
}
