import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APP_KEY, startTestGateway, testConfig, type TestGateway } from "./support/gateway.ts";
import { startMockProviders, type MockProviders } from "./support/msw/index.ts";

// The response cache keys on the neutral ChatRequest (policies/response-cache/response-cache.ts).
// Request fields the OpenAI dialect did not model (frequency_penalty, logit_bias) used to be
// stripped, so two different requests got one key, and the second was answered with the first
// one's cached answer. They are carried now, and so part of the key.

let mocks: MockProviders;
let gateway: TestGateway;

beforeAll(async () => {
  mocks = startMockProviders();
  const base = testConfig();
  gateway = await startTestGateway({ ...base, routes: { ...base.routes, answers: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { responseCache: { ttlSeconds: 60 } } } } });
});
afterAll(async () => {
  await gateway?.close();
  mocks?.close();
});
beforeEach(() => mocks.openai.reset());

const chat = (body: object) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("response cache keys", () => {
  it("two requests that differ in an answer-shaping field never share a cached answer", async () => {
    const messages = [{ role: "user", content: "Name a colour" }];
    mocks.openai.enqueue({ kind: "text", text: "red red red red" });
    const first = await chat({ model: "answers", temperature: 0, messages, frequency_penalty: 2, logit_bias: { "1234": -100 } });
    expect(first.status).toBe(200);
    mocks.openai.enqueue({ kind: "text", text: "blue" });
    const second = await chat({ model: "answers", temperature: 0, messages });
    expect(second.status).toBe(200);
    // Either the first request was refused (400 naming the field) or the second one is a miss.
    expect(second.headers.get("x-tollgate-cache")).toBe("miss");
  });
});
