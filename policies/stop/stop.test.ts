import { describe, expect, it } from "vitest";
import { parseOpenAIRequest } from "../../src/dialects/openai/parse-openai-request.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import { MemoryKeyValueStore } from "../../src/store/memory-key-value-store.ts";
import { PolicyChain, routePoliciesSchema } from "../policy-chain.ts";
import type { PolicyTarget } from "../policy.ts";

// An OpenAI client's empty stop sequence ("" passes OpenAI's dialect) stops nothing. Was: sent on
// to every target but Claude, so vLLM answered 400 ("stop cannot contain an empty string") and
// within OpenAI's 4 it took the place of the route's own sequence.

const store = new MemoryKeyValueStore();
const context = { route: "r", team: "t", store, counter: approximateTokenCounter };
const gpt4o: PolicyTarget = { providerName: "openai", providerType: "openai", model: "gpt-4o" };
const vllm: PolicyTarget = { providerName: "local", providerType: "openai-compatible", model: "qwen3-8b" };
const chain = (policies: unknown) => PolicyChain.forRoute(routePoliciesSchema.parse(policies), Object.keys(policies as object), store);
const asked = (stop: string[]) => parseOpenAIRequest({ model: "r", messages: [{ role: "user", content: "hi" }], stop });

describe("an empty stop sequence", () => {
  it("is not sent to a local decoder, and the answer says so", async () => {
    const { request: sent, log } = await chain({}).adaptToTarget(asked(["END", ""]), vllm, context);
    expect(sent.stop).toEqual(["END"]);
    expect(log.notes).toEqual(["stop=dropped:1"]);
    expect(log.warnings).toEqual(["an empty stop sequence stops nothing (and local decoders refuse it); not sent to qwen3-8b"]);
  });

  it("does not take the place of the route's own sequence within OpenAI's 4", async () => {
    const route = chain({ stop: { sequences: ["\n\nUser:"] } });
    const { request: shaped } = await route.apply(asked(["a", "b", "c", ""]), context);
    const { request: sent, log } = await route.adaptToTarget(shaped, gpt4o, context);
    expect(sent.stop).toEqual(["a", "b", "c", "\n\nUser:"]);
    expect(log.notes).toEqual(["stop=dropped:1"]);
  });

  it("alone leaves the request without stop sequences", async () => {
    const { request: sent } = await chain({}).adaptToTarget(asked([""]), gpt4o, context);
    expect(sent.stop).toBeUndefined();
  });

  it('is the only blank one dropped off Claude: "\\n" stops an OpenAI model or a decoder', async () => {
    const { request: sent, log } = await chain({}).adaptToTarget(asked(["\n", ""]), vllm, context);
    expect(sent.stop).toEqual(["\n"]);
    expect(log.notes).toEqual(["stop=dropped:1"]);
  });
});
