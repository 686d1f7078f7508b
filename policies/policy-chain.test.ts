import { describe, expect, it } from "vitest";
import { GatewayError } from "../src/errors/gateway-error.ts";
import { approximateTokenCounter } from "../src/metering/token-counter.ts";
import type { ChatRequest } from "../src/model/chat-request.ts";
import { MemoryKeyValueStore } from "../src/store/memory-key-value-store.ts";
import { PolicyChain, routePoliciesSchema } from "./policy-chain.ts";
import type { PolicyTarget } from "./policy.ts";

// The chain on its own: order, no mutation of the client's request, and each policy's notes.

const store = new MemoryKeyValueStore();
const context = { route: "r", team: "t", store, counter: approximateTokenCounter };
const request: ChatRequest = {
  route: "r",
  stream: false,
  streamUsage: false,
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
};
const gpt4o: PolicyTarget = { providerName: "openai", providerType: "openai", model: "gpt-4o" };
const sonnet: PolicyTarget = { providerName: "anthropic", providerType: "anthropic", model: "claude-sonnet-4-6" };

function chain(policies: unknown, order = Object.keys(policies as object)) {
  return PolicyChain.forRoute(routePoliciesSchema.parse(policies), order, store);
}

describe("PolicyChain", () => {
  it("leaves the client's request untouched and returns a new one", async () => {
    const frozen = structuredClone(request);
    const { request: shaped } = await chain({ maxTokens: { default: 100 }, brevity: { maxSentences: 1 } }).apply(request, context);
    expect(request).toEqual(frozen);
    expect(shaped.maxTokens).toBe(100);
    expect(shaped.messages[0]).toEqual({ role: "system", content: "Answer in one sentence." });
  });

  it("format goes first and brevity last in the system prompt, whatever the config's order", async () => {
    for (const order of [["format", "brevity"], ["brevity", "format"]]) {
      const { request: shaped } = await chain({ format: { type: "json" }, brevity: { maxSentences: 2 } }, order).apply(
        { ...request, messages: [{ role: "system", content: "Be kind." }, ...request.messages] },
        context,
      );
      expect(shaped.messages[0]).toEqual({
        role: "system",
        content: "Respond with a single JSON object and nothing else.\nBe kind.\nAnswer in at most 2 sentences.",
      });
    }
  });

  it("guards every route: a model's maximum output and OpenAI's stop limit apply without any policy configured", async () => {
    const { request: adapted, log } = await chain({}).adaptToTarget({ ...request, maxTokens: 99_999, stop: ["1", "2", "3", "4", "5"] }, gpt4o, context);
    expect(adapted.maxTokens).toBe(16_384);
    expect(adapted.stop).toEqual(["1", "2", "3", "4"]);
    expect(log.notes).toEqual(["max_tokens=model-max:99999->16384", "stop=trimmed:5->4"]);
  });

  it("penalties and logit_bias go to OpenAI as sent, and are dropped with a note for Anthropic, which has neither", async () => {
    const penalized: ChatRequest = { ...request, frequencyPenalty: 1.5, presencePenalty: -0.5, logitBias: { "1234": -100 } };
    const { request: forGpt, log: gptLog } = await chain({}).adaptToTarget(penalized, gpt4o, context);
    expect([forGpt.frequencyPenalty, forGpt.presencePenalty, forGpt.logitBias, gptLog.notes]).toEqual([1.5, -0.5, { "1234": -100 }, []]);
    const { request: forClaude, log } = await chain({}).adaptToTarget(penalized, sonnet, context);
    expect([forClaude.frequencyPenalty, forClaude.presencePenalty, forClaude.logitBias]).toEqual([undefined, undefined, undefined]);
    expect(log.notes).toEqual(["max_tokens=claude-default:4096", "frequency_penalty=dropped", "presence_penalty=dropped", "logit_bias=dropped"]);
    expect(log.warnings.at(-1)).toBe('logit_bias {"1234":-100} was not sent: claude-sonnet-4-6 does not accept it');
  });

  it("OpenAI's reasoning models, listed or not (o3, o3-mini), get no top_p, penalties, logit_bias, stop or non-default temperature", async () => {
    const tuned: ChatRequest = { ...request, temperature: 0.2, topP: 1, frequencyPenalty: 0.5, presencePenalty: 0.3, logitBias: { "1234": -100 }, stop: ["END"] };
    for (const model of ["o3", "o3-mini", "o1-2024-12-17"]) {
      const { request: sent, log } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model }, context);
      expect([sent.temperature, sent.topP, sent.frequencyPenalty, sent.presencePenalty, sent.logitBias, sent.stop]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
      expect(log.notes).toEqual(expect.arrayContaining(["temperature=dropped", "top_p=dropped", "frequency_penalty=dropped", "presence_penalty=dropped", "logit_bias=dropped"]));
    }
    // A fine-tuned o4-mini is an o4-mini.
    const { request: tuned4 } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model: "ft:o4-mini-2025-04-16:acme::B1xYz9" }, context);
    expect([tuned4.temperature, tuned4.topP, tuned4.presencePenalty, tuned4.stop]).toEqual([undefined, undefined, undefined, undefined]);
    // "o" names that are no o-series model keep what they were sent.
    const { request: other } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model: "omni-moderation-latest" }, context);
    expect([other.temperature, other.topP, other.stop]).toEqual([0.2, 1, ["END"]]);
  });

  // gpt-5 is not in the price list, and was taken for a chat model: a route's stop sequences or
  // temperature default reached it, and it answered every request with a 400 (found by review).
  it("gpt-5, -mini and -nano, not listed, are held to what reasoning models take, verbosity aside", async () => {
    const tuned: ChatRequest = { ...request, temperature: 0.2, topP: 0.9, stop: ["END"], verbosity: "low" };
    for (const model of ["gpt-5", "gpt-5-mini", "gpt-5-nano-2025-08-07"]) {
      const { request: sent, log } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model }, context);
      expect([sent.temperature, sent.topP, sent.stop, sent.verbosity], model).toEqual([undefined, undefined, undefined, "low"]);
      expect(log.notes, model).toEqual(expect.arrayContaining(["temperature=dropped", "top_p=dropped"]));
    }
  });

  // gpt-5.1 and later reason at "none" by default and then take temperature and top_p, but no
  // stop sequences; the chat variants take everything a chat model does.
  it("gpt-5.1 and later get no stop sequences, and keep their sampling; gpt-5-chat keeps both", async () => {
    const tuned: ChatRequest = { ...request, temperature: 0.2, topP: 0.9, stop: ["END"], reasoningEffort: "none" };
    for (const model of ["gpt-5.1", "gpt-5.2-2025-12-11", "gpt-5.4-mini"]) {
      const { request: sent } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model }, context);
      expect([sent.temperature, sent.topP, sent.stop, sent.reasoningEffort], model).toEqual([0.2, 0.9, undefined, "none"]);
    }
    for (const model of ["gpt-5-chat-latest", "gpt-5.1-chat-latest"]) {
      const { request: sent } = await chain({}).adaptToTarget(tuned, { ...gpt4o, model }, context);
      expect([sent.temperature, sent.stop], model).toEqual([0.2, ["END"]]);
    }
  });

  // o3 and o4-mini refuse parallel_tool_calls, false too; an Anthropic client's
  // disable_parallel_tool_use arrives as false, and a gpt-4o → o3 fallback carried an OpenAI
  // client's (found by review).
  it("parallel_tool_calls is dropped with a note for the o-series, and kept for gpt-4o and gpt-5", async () => {
    const serial: ChatRequest = { ...request, parallelToolCalls: false, tools: [{ name: "f", parameters: { type: "object" } }] };
    for (const model of ["o3", "o4-mini-2025-04-16", "o3-mini"]) {
      const { request: sent, log } = await chain({}).adaptToTarget(serial, { ...gpt4o, model }, context);
      expect([sent.parallelToolCalls, log.notes], model).toEqual([undefined, ["parallel_tool_calls=dropped"]]);
    }
    for (const model of ["gpt-4o", "gpt-5"]) {
      const { request: sent } = await chain({}).adaptToTarget(serial, { ...gpt4o, model }, context);
      expect(sent.parallelToolCalls, model).toBe(false);
    }
  });

  // Claude has no seed: the adapter never sent one, yet a route's default was reported applied.
  it("seed is dropped with a note for Claude, a route's default too", async () => {
    const { request: sent, log } = await chain({}).adaptToTarget({ ...request, seed: 7 }, sonnet, context);
    expect([sent.seed, log.notes]).toEqual([undefined, ["max_tokens=claude-default:4096", "seed=dropped"]]);
    const seeded = chain({ sampling: { seed: { default: 7 } } });
    const { request: shaped, log: routeLog } = await seeded.apply(request, context);
    const { request: forClaude, log: targetLog } = await seeded.adaptToTarget(shaped, sonnet, context);
    expect([routeLog.notes, forClaude.seed, targetLog.notes]).toEqual([["seed=default:7"], undefined, ["seed=dropped", "max_tokens=claude-default:4096"]]);
    const { request: forGpt } = await seeded.adaptToTarget(shaped, gpt4o, context);
    expect(forGpt.seed).toBe(7);
  });

  it("reasoning_effort goes to OpenAI's reasoning models as sent, and is dropped with a note for its chat models and for Claude (as Anthropic's own OpenAI layer ignores it)", async () => {
    const effortful: ChatRequest = { ...request, reasoningEffort: "xhigh" };
    const { request: forO3, log: o3Log } = await chain({}).adaptToTarget(effortful, { ...gpt4o, model: "o3" }, context);
    expect([forO3.reasoningEffort, o3Log.notes]).toEqual(["xhigh", []]);
    // gpt-4o answers it with a 400 (a route falling back from o3 to gpt-4o failed on it); a model
    // the list does not know gets it as sent.
    const { request: forGpt, log: gptLog } = await chain({}).adaptToTarget(effortful, gpt4o, context);
    expect([forGpt.reasoningEffort, gptLog.notes]).toEqual([undefined, ["reasoning_effort=dropped"]]);
    const { request: forTuned } = await chain({}).adaptToTarget(effortful, { ...gpt4o, model: "ft:gpt-4o-2024-08-06:acme::B1xYz9" }, context);
    expect(forTuned.reasoningEffort).toBeUndefined();
    const { request: forNew } = await chain({}).adaptToTarget(effortful, { ...gpt4o, model: "gpt-7" }, context);
    expect(forNew.reasoningEffort).toBe("xhigh");
    const { request: forClaude, log } = await chain({}).adaptToTarget(effortful, sonnet, context);
    expect(forClaude.reasoningEffort).toBeUndefined();
    expect(log.notes).toEqual(["max_tokens=claude-default:4096", "reasoning_effort=dropped"]);
    expect(log.warnings).toEqual(['reasoning_effort "xhigh" was not sent: claude-sonnet-4-6 does not accept it']);
    const refusing = chain({ sampling: { onUnsupported: "reject" } }).adaptToTarget(effortful, sonnet, context);
    await expect(refusing).rejects.toThrow("reasoning_effort is not accepted by claude-sonnet-4-6 (anthropic): remove reasoning_effort");
  });

  it("a JSON-schema request names its schema on the first line, and Anthropic gets the schema itself", async () => {
    const withSchema: ChatRequest = { ...request, responseFormat: { type: "json-schema", name: "city", schema: { type: "object", required: ["name"] } } };
    const { request: shaped } = await chain({}).apply(withSchema, context);
    expect(shaped.messages[0]).toEqual({ role: "system", content: 'Respond with a single JSON object that conforms to the JSON Schema "city", and nothing else.' });
    const { request: forClaude } = await chain({}).adaptToTarget(shaped, sonnet, context);
    expect(forClaude.messages[0]).toEqual({
      role: "system",
      content: 'Respond with a single JSON object that conforms to this JSON Schema, and nothing else: {"type":"object","required":["name"]}',
    });
  });

  it("a client's json_object on a route whose format is text with its own instruction: the client's JSON line first, the route's after", async () => {
    // Was: the route's line replaced the client's whenever the messages mentioned json, and
    // Claude (no response_format) got no JSON instruction at all.
    const route = { format: { type: "text", instruction: "Answer in Markdown with one table." } };
    const asked: ChatRequest = { ...request, responseFormat: { type: "json" }, messages: [{ role: "user", content: [{ type: "text", text: "Fruits as json." }] }] };
    const { request: shaped } = await chain(route).apply(asked, context);
    expect(shaped.messages[0]).toEqual({ role: "system", content: "Respond with a single JSON object and nothing else.\nAnswer in Markdown with one table." });
    // A route that wants JSON in its own words keeps them alone.
    const { request: routeJson } = await chain({ format: { type: "json", instruction: "Reply as one JSON object with a fruits array." } }).apply(asked, context);
    expect(routeJson.messages[0]).toEqual({ role: "system", content: "Reply as one JSON object with a fruits array." });
  });

  it("a model's own maximum that lowers max_tokens lowers a thinking budget in proportion too", async () => {
    // claude-opus-4-1 answers at most 32,000 tokens: 40,000 of 64,000 thinking becomes 20,000 of 32,000.
    const thinking: ChatRequest = { ...request, maxTokens: 64_000, thinking: { type: "enabled", budget_tokens: 40_000 } };
    const { request: sent, log } = await chain({}).adaptToTarget(thinking, { ...sonnet, model: "claude-opus-4-1" }, context);
    expect([sent.maxTokens, sent.thinking]).toEqual([32_000, { type: "enabled", budget_tokens: 20_000 }]);
    expect(log.notes).toEqual(["max_tokens=model-max:64000->32000", "thinking.budget_tokens=scaled:40000->20000"]);
  });

  it("max_tokens reject is a 400 that names the cap", async () => {
    const error = await chain({ maxTokens: { cap: 10, onExceed: "reject" } })
      .apply({ ...request, maxTokens: 11 }, context)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, param: "max_tokens", message: expect.stringContaining("at most 10") });
  });

  it("config errors name the fix", () => {
    const result = routePoliciesSchema.safeParse({ maxTokens: { default: 2000, cap: 1000 }, promptCache: { ttl: "2h" } });
    expect(result.success).toBe(false);
    const messages = result.error!.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    expect(messages).toEqual(expect.arrayContaining(["maxTokens.default: default is above cap: lower default to at most cap", 'promptCache.ttl: write "5m" or "1h"']));
  });
});

describe("MemoryKeyValueStore", () => {
  it("counts sightings within a sliding TTL and forgets after it", async () => {
    // A clock that reads like Date.now (lru-cache takes a start time of 0 for "no expiry").
    let now = 1_795_000_000_000;
    const memory = new MemoryKeyValueStore(10, () => now);
    expect(await memory.countSightings(["a", "b"], 10)).toEqual([1, 1]);
    now += 9_000;
    expect(await memory.countSightings(["a"], 10)).toEqual([2]);
    now += 9_000; // 9 s after a's last sighting, 18 s after b's
    expect(await memory.countSightings(["a", "b"], 10)).toEqual([3, 1]);
  });

  it("stays bounded in size too: large answers push out the oldest", async () => {
    const memory = new MemoryKeyValueStore(100, Date.now, 25);
    await memory.set("a", "x".repeat(10), 60);
    await memory.set("b", "y".repeat(10), 60);
    await memory.set("c", "z".repeat(10), 60); // 33 characters with the keys: "a" goes
    expect([await memory.get("a"), await memory.get("b"), await memory.get("c")]).toEqual([undefined, "y".repeat(10), "z".repeat(10)]);
    await memory.set("huge", "w".repeat(100), 60); // larger than the store: not kept, nothing pushed out
    expect([await memory.get("huge"), await memory.get("b")]).toEqual([undefined, "y".repeat(10)]);
    await memory.set("b", "y", 0); // a TTL of 0: gone at once (lru-cache alone would keep it forever)
    expect(await memory.get("b")).toBeUndefined();
  });

  it("stays bounded, dropping the least recently used entries first", async () => {
    const memory = new MemoryKeyValueStore(2);
    await memory.set("one", "1", 60);
    await memory.set("two", "2", 60);
    await memory.set("three", "3", 60);
    expect([await memory.get("one"), await memory.get("two"), await memory.get("three")]).toEqual([undefined, "2", "3"]);
    await memory.get("two"); // "two" is now the more recently used
    await memory.set("four", "4", 60);
    expect([await memory.get("two"), await memory.get("three"), await memory.get("four")]).toEqual(["2", undefined, "4"]);
  });

  it("keeps the latest entries whole through many writes past its limit", async () => {
    const memory = new MemoryKeyValueStore(1_000);
    for (let i = 0; i < 50_000; i++) await memory.set(`k${i}`, String(i), 60);
    const kept = await Promise.all(Array.from({ length: 1_000 }, (_, i) => memory.get(`k${49_000 + i}`)));
    expect(kept).toEqual(Array.from({ length: 1_000 }, (_, i) => String(49_000 + i)));
    expect(await memory.get("k48999")).toBeUndefined();
  });
});

describe("prompt caching without its store", () => {
  it("sends the request without breakpoints and warns, instead of failing it", async () => {
    const down = {
      countSightings: async () => {
        throw new Error("connection refused");
      },
      get: async () => undefined,
      set: async () => {},
    };
    const longPrompt: ChatRequest = { ...request, messages: [{ role: "system", content: "Stable. ".repeat(2000) }, ...request.messages] };
    const chainWithCache = PolicyChain.forRoute(routePoliciesSchema.parse({ promptCache: { mode: "auto" } }), ["promptCache"], down);
    const { request: adapted, log } = await chainWithCache.adaptToTarget(longPrompt, sonnet, { ...context, store: down });
    expect(adapted.promptCache).toBeUndefined();
    expect(log.warnings.join()).toContain("the store is unreachable (connection refused)");
  });
});
