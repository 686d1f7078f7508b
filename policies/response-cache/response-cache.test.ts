import { describe, expect, it } from "vitest";
import type { Caller } from "../../src/auth/authenticate.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { MemoryKeyValueStore } from "../../src/store/memory-key-value-store.ts";
import { ResponseCache } from "./response-cache.ts";

// A route moved to another model (a new deploy, sharing the old one's Redis) must answer from
// that model, not from the old model's cached answers until they expire. Was: the key held the
// route's name and the request only.

const cache = new ResponseCache(new MemoryKeyValueStore(), { ttlSeconds: 60, share: "team" });
const caller = { kind: "key", key: { id: "app", team: "search" } } as Caller;
const request: ChatRequest = { route: "answers", stream: false, streamUsage: false, temperature: 0, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };
const gpt4o = { provider: "openai", model: "gpt-4o" };
const claude = { provider: "anthropic", model: "claude-sonnet-4-6" };

describe("response cache key", () => {
  it("changes with the route's models, not with their order (a cheapest route reorders them per request)", async () => {
    const before = await cache.keyFor("answers", [gpt4o], request, caller);
    expect(await cache.keyFor("answers", [{ provider: "openai", model: "gpt-4.1" }], request, caller)).not.toBe(before);
    expect(await cache.keyFor("answers", [gpt4o, claude], request, caller)).toBe(await cache.keyFor("answers", [claude, gpt4o], request, caller));
    // Streamed or not, the same answer.
    expect(await cache.keyFor("answers", [gpt4o], { ...request, stream: true, streamUsage: true }, caller)).toBe(before);
  });

  it("is the same whether max_tokens came as max_tokens or max_completion_tokens", async () => {
    const asMaxTokens = await cache.keyFor("answers", [gpt4o], { ...request, maxTokens: 100 }, caller);
    expect(await cache.keyFor("answers", [gpt4o], { ...request, maxTokens: 100, maxTokensField: "max_completion_tokens" }, caller)).toBe(asMaxTokens);
  });
});
