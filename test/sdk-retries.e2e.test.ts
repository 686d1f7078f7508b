import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { APP_KEY, useMockedGateway } from "./support/gateway.ts";

// The official SDKs retry a 429 and a 5xx themselves (maxRetries, 2 by default), reading the
// answer's retry-after and x-should-retry. Through tollgate they must retry as they would against
// the provider: once, then the answer. (The rig had hung every such retry: msw's unread copy of a
// JSON error body kept the SDK's cancel() of it pending; test/support/msw/index.ts.)

const rig = useMockedGateway();
const openai = () => new OpenAI({ baseURL: `${rig.gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 2 });
const anthropic = () => new Anthropic({ baseURL: rig.gateway.url, apiKey: APP_KEY, maxRetries: 2 });

describe("an SDK's own retries through tollgate", () => {
  it.each([
    ["OpenAI 429", "gpt", { kind: "http-error", status: 429, retryAfter: 0 }],
    ["OpenAI 503", "gpt", { kind: "http-error", status: 503 }],
    ["Anthropic 529 overloaded", "claude", { kind: "http-error", status: 529, type: "overloaded_error" }],
  ] as const)("%s, then an answer: each SDK retries once and gets it", async (_name, route, failure) => {
    const mock = route === "gpt" ? rig.mocks.openai : rig.mocks.anthropic;
    for (const client of ["openai", "anthropic"] as const) {
      mock.reset();
      mock.enqueue(failure, { kind: "text", text: "ok" });
      const text =
        client === "openai"
          ? (await openai().chat.completions.create({ model: route, messages: [{ role: "user", content: "x" }] })).choices[0]!.message.content
          : (await anthropic().messages.create({ model: route, max_tokens: 10, messages: [{ role: "user", content: "x" }] })).content.map((block) => (block.type === "text" ? block.text : "")).join("");
      expect({ client, text, providerCalls: mock.requests.length }).toEqual({ client, text: "ok", providerCalls: 2 });
    }
  }, 30_000);
});
