import { describe, expect, it } from "vitest";
import { MAX_TOKENS_BOUND } from "./max-tokens-bound.ts";
import { parseAnthropicRequest } from "./anthropic/parse-anthropic-request.ts";
import { parseOpenAIRequest } from "./openai/parse-openai-request.ts";
import { worstCaseCost } from "../budgets/worst-case-cost.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { toModelPrice } from "../pricing/find-model-price.ts";

// max_tokens used to be bounded only by Number.MAX_SAFE_INTEGER. On a soft-budgeted route to a
// GPU-hour-priced decoder, 9e15 made a worst case past 2^63 nano-dollars: Redis's HINCRBY refused
// it and the client got a 503 "budget store unreachable". Both dialects now stop at 2^31 − 1.

const messages = [{ role: "user", content: "hi" }];
const refusal = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    return error instanceof GatewayError ? { status: error.status, param: error.param, message: error.message } : error;
  }
  return "accepted";
};

describe("max_tokens' upper bound", () => {
  it("is 2^31 − 1 in the OpenAI dialect, for max_tokens and max_completion_tokens", () => {
    expect(parseOpenAIRequest({ model: "local", messages, max_tokens: MAX_TOKENS_BOUND }).maxTokens).toBe(2_147_483_647);
    for (const field of ["max_tokens", "max_completion_tokens"]) {
      expect(refusal(() => parseOpenAIRequest({ model: "local", messages, [field]: 9e15 }))).toEqual({
        status: 400,
        param: field,
        message: `${field}: at most 2147483647; a model's own limit is lower still`,
      });
    }
  });

  it("is 2^31 − 1 in the Anthropic dialect", () => {
    expect(parseAnthropicRequest({ model: "local", messages, max_tokens: MAX_TOKENS_BOUND }).maxTokens).toBe(2_147_483_647);
    expect(refusal(() => parseAnthropicRequest({ model: "local", messages, max_tokens: 9e15 }))).toEqual({
      status: 400,
      param: "max_tokens",
      message: "max_tokens: at most 2147483647; a model's own limit is lower still",
    });
  });

  it("keeps the worst case at that bound a safe integer at a GPU-hour price", () => {
    // $2 an hour at 1 output token a second: 2 / 3600 USD = 555,555.5… nano a token.
    const price = toModelPrice({ gpuHourUsd: 2, inputTokensPerSecond: 1, outputTokensPerSecond: 1 });
    const request = parseOpenAIRequest({ model: "local", messages, max_tokens: MAX_TOKENS_BOUND });
    const worst = worstCaseCost(request, [{ price, outputBound: MAX_TOKENS_BOUND }]);
    expect(Number.isSafeInteger(worst.amountNano)).toBe(true);
    expect(worst.amountNano).toBeLessThan(2 ** 63);
  });
});
