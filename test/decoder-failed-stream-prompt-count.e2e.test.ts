import { describe, expect, it } from "vitest";
import { PROMPT_COUNTED_BY_DECODER } from "../src/metering/decoder-prompt-count.ts";
import { APP_KEY, chunk, useDecoderRig, waitForRecord } from "./support/decoder-rig.ts";

// A local decoder whose stream fails mid-answer (connection lost, or an error event) while the
// decoder itself still answers /apply-template + /tokenize: the record bills the decoder's own
// count of the prompt, as it does for a client that left, and the summary after the error event
// says the same. Was: the failed stream's summary settled the record before asking the decoder,
// and the record kept tollgate's own o200k count (found by review).
const DECODER_COUNT = 777;

describe("a local decoder's stream that fails mid-answer", () => {
  const rig = useDecoderRig();

  async function run(how: "cut" | "error-event" | "client-cancel") {
    rig.decoder.handle = (_body, res) => {
      const path = rig.decoder.paths.at(-1)!;
      if (path.endsWith("/apply-template")) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ prompt: "templated" }));
      if (path.endsWith("/tokenize")) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ tokens: Array.from({ length: DECODER_COUNT }, (_, i) => i) }));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("c", { role: "assistant", content: "Hello there" }));
      if (how === "cut") setTimeout(() => res.socket?.destroy(), 50);
      else if (how === "error-event") setTimeout(() => res.end(`data: ${JSON.stringify({ error: { message: "boom", type: "server_error", code: 500 } })}\n\n`), 50);
      // client-cancel: keep the stream open
    };
    const response = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }], stream: true, max_tokens: 50 }),
    });
    const requestId = response.headers.get("x-tollgate-request-id")!;
    const reader = response.body!.getReader();
    let text = "";
    if (how === "client-cancel") {
      while (!text.includes("Hello")) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
    } else for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    const record = await waitForRecord(rig.gateway, requestId);
    return { record, text };
  }

  it("control: the client cancels: the decoder's count is billed", async () => {
    const { record } = await run("client-cancel");
    expect(record.usage.inputTokens).toBe(DECODER_COUNT);
  });

  it.each(["cut", "error-event"] as const)("%s: the decoder (still up) is asked for its prompt count", async (how) => {
    const { record, text } = await run(how);
    expect(text).toContain('"error"');
    expect(record.status).toBe("error");
    expect(record.warnings).toContain(PROMPT_COUNTED_BY_DECODER);
    expect(record.usage.inputTokens).toBe(DECODER_COUNT);
    const summary = JSON.parse(/\n: tollgate (\{.*\})\n/.exec(text)![1]!) as { inputTokens: number; costUsd: string };
    expect(summary.inputTokens).toBe(DECODER_COUNT);
  });
});
