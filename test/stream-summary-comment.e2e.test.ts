import { describe, expect, it } from "vitest";
import { APP_KEY, readSseStream, useMockedGateway } from "./support/gateway.ts";

// A stream's summary (the x-tollgate-* figures) goes as an SSE comment line, which every SSE
// reader skips, so that every `data:` line is one the provider itself could have sent. Clients
// stricter than the official SDKs check each one: the Vercel AI SDK (`ai` 5 and 6) reads past
// `[DONE]` and `message_stop` and validates every data line as a chunk. Was: a `{"tollgate":…}`
// data event after them, which failed that check and turned every complete streamed answer
// into an error (and ended a streamed tool loop after its first tool call).

const rig = useMockedGateway();
const ANTHROPIC_EVENTS = new Set(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping", "error"]);

function dataLines(text: string): string[] {
  return text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim());
}

describe("every data line of a stream is the provider's own kind", () => {
  it.each(["gpt", "claude"])("OpenAI dialect, route %s: chat.completion.chunk objects, then [DONE]", async (route) => {
    const response = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: route, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const { text, summary } = await readSseStream(response);
    const lines = dataLines(text);
    expect(lines.at(-1)).toBe("[DONE]");
    for (const line of lines.slice(0, -1)) expect(JSON.parse(line)).toMatchObject({ object: "chat.completion.chunk", choices: expect.any(Array) });
    // The figures are still there for whoever reads the raw stream.
    expect(summary).toMatchObject({ route, requestId: response.headers.get("x-tollgate-request-id") });
  });

  it.each(["gpt", "claude"])("Anthropic dialect, route %s: Messages events only, message_stop last", async (route) => {
    const response = await fetch(`${rig.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": APP_KEY, "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: route, max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const { text, summary } = await readSseStream(response);
    const types = dataLines(text).map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.every((type) => ANTHROPIC_EVENTS.has(type))).toBe(true);
    expect(types.at(-1)).toBe("message_stop");
    expect(summary).toMatchObject({ route, requestId: response.headers.get("x-tollgate-request-id") });
  });
});
