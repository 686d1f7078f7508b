import { describe, expect, it } from "vitest";
import { parseAnthropicRequest } from "../../src/dialects/anthropic/parse-anthropic-request.ts";
import { parseOpenAIRequest } from "../../src/dialects/openai/parse-openai-request.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { approximateTokenCounter } from "../../src/metering/token-counter.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { MemoryKeyValueStore } from "../../src/store/memory-key-value-store.ts";
import { PolicyChain, routePoliciesSchema } from "../policy-chain.ts";

// A route's cap with "onExceed": "reject" names the field the client sent. Was: always
// max_tokens, so a client of an o-series model, which takes only max_completion_tokens, was told
// to send a field its model refuses.

const store = new MemoryKeyValueStore();
const context = { route: "r", team: "t", store, counter: approximateTokenCounter };
const capped = PolicyChain.forRoute(routePoliciesSchema.parse({ maxTokens: { cap: 1000, onExceed: "reject" } }), ["maxTokens"], store);
const refusal = (request: ChatRequest) => capped.apply(request, context).then(() => undefined, (error: unknown) => error as GatewayError);
const openAI = (fields: object) => parseOpenAIRequest({ model: "r", messages: [{ role: "user", content: "hi" }], ...fields });

describe("the cap's refusal", () => {
  it("names max_completion_tokens to a client that sent it", async () => {
    const error = await refusal(openAI({ max_completion_tokens: 2000 }));
    expect(error).toMatchObject({ status: 400, param: "max_completion_tokens", message: "max_completion_tokens 2000 is above this route's cap of 1000: send max_completion_tokens of at most 1000" });
  });

  it("names max_completion_tokens where a client sent both (it is the one that counts)", async () => {
    expect(await refusal(openAI({ max_tokens: 500, max_completion_tokens: 2000 }))).toMatchObject({ param: "max_completion_tokens" });
  });

  it("names max_tokens to a client that sent it, in either dialect", async () => {
    expect(await refusal(openAI({ max_tokens: 2000 }))).toMatchObject({ param: "max_tokens", message: "max_tokens 2000 is above this route's cap of 1000: send max_tokens of at most 1000" });
    const anthropic = parseAnthropicRequest({ model: "r", max_tokens: 2000, messages: [{ role: "user", content: "hi" }] });
    expect(await refusal(anthropic)).toMatchObject({ param: "max_tokens" });
  });
});
