import { describe, expect, it } from "vitest";
import { PolicyChain } from "../../policies/policy-chain.ts";
import { promptBytes } from "./worst-case-cost.ts";
import { approximateTokenCounter } from "../metering/token-counter.ts";
import type { ChatMessage, ChatRequest } from "../model/chat-request.ts";
import { MemoryKeyValueStore } from "../store/memory-key-value-store.ts";

// The worst case bounds input by promptBytes(request), computed at admission. A client's
// response_format json_schema must count: the format policy (on every route) writes the
// whole schema into the system prompt for Anthropic targets in adaptToTarget, AFTER admission
// (and OpenAI bills a json_schema's tokens as input too). A large schema with a short prompt
// is then billed far above the bound the budget reserved.

const schema = {
  type: "object",
  properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field_${i}`, { type: "string", description: `the ${i}th field of the answer` }])),
};

const bytesOf = (messages: ChatMessage[]) =>
  messages.reduce(
    (sum, message) =>
      sum + (message.role === "system" || message.role === "tool" ? Buffer.byteLength(message.content) : message.content.reduce((s, part) => s + (part.type === "text" ? Buffer.byteLength(part.text) : 0), 0)),
    0,
  );

describe("worst-case input bound with a json_schema response_format", () => {
  it("covers every byte the Anthropic target is sent", async () => {
    const request: ChatRequest = {
      route: "claude",
      stream: false,
      streamUsage: false,
      maxTokens: 10,
      responseFormat: { type: "json-schema", name: "answer", schema },
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    };
    const context = { route: "claude", team: "search", store: new MemoryKeyValueStore(), counter: approximateTokenCounter };
    const chain = PolicyChain.forRoute(undefined, [], context.store);
    // What handle-chat does: apply() before admission, adaptToTarget() after.
    const { request: applied } = await chain.apply(request, context);
    const bound = promptBytes(applied); // what admission reserves input for
    const { request: sent } = await chain.adaptToTarget(applied, { providerName: "anthropic", providerType: "anthropic", model: "claude-sonnet-4-6" }, context);
    expect(bound).toBeGreaterThanOrEqual(bytesOf(sent.messages));
  });
});

describe("worst-case input bound with tools", () => {
  it("leaves room for the tool-use system prompt Anthropic adds (up to 346 tokens on Claude 4)", () => {
    const tool = { name: "now", parameters: { type: "object", properties: {} } };
    const request: ChatRequest = { route: "claude", stream: false, streamUsage: false, tools: [tool], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
    const withoutTools = promptBytes({ ...request, tools: undefined });
    expect(promptBytes(request) - withoutTools).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify([tool])) + 346);
  });
});
