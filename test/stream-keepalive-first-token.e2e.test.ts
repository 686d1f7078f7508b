import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, readSseEvents, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// A reasoning model is quiet BEFORE its first token: OpenAI sends the role chunk at once, then
// nothing until the reasoning is done. tollgate used to hold the whole response (not even the
// status line) until the first answer part, so a load balancer's idle timeout could cut the
// client's connection, keep-alive or not. Now a stream that has begun and stays silent for
// `streamKeepAliveSeconds` is committed: status line, role chunk, keep-alives.

let mocks: MockProviders;
let gateway: TestGateway;
beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({ ...base, server: { ...base.server, streamKeepAliveSeconds: 0.2 } });
});
afterAll(async () => {
  await gateway.close();
  mocks.close();
});

/** Reads the body until `seen` holds, then stops reading; fails the test if the body ends first. */
async function readUntil(response: Response, seen: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!seen(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before it was seen:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe("a stream whose model is silent before its first token", () => {
  it("gets its status line, the role chunk and keep-alives while the upstream says nothing more", async () => {
    // The role chunk, then silence for good.
    mocks.openai.enqueue({ kind: "stall", afterChunks: 0 });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "think first" }] });
    expect(response.status).toBe(200);
    const text = await readUntil(response, (sofar) => sofar.split(": keep-alive\n\n").length > 2);
    const firstEvent = JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n")));
    expect(firstEvent.choices[0].delta).toEqual({ role: "assistant", content: "" });
  });

  it("still gets the whole answer when it comes after the silence", async () => {
    mocks.openai.enqueue({ kind: "text", chunks: ["Thought", " it over."], delayMsBetweenChunks: 600 });
    const response = await postJson(gateway, "/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "think first" }] });
    const events = await readSseEvents(response);
    const text = events
      .filter((event) => event.data.startsWith("{") && event.data.includes('"choices"'))
      .map((event) => JSON.parse(event.data).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Thought it over.");
    expect(events.some((event) => event.data === "[DONE]")).toBe(true);
  });
});
