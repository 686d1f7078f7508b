// No model answers with more than a few hundred thousand tokens, but a worst-case cost is
// max_tokens × the output price: 9e15 (a safe integer) at a local GPU's price is past 2^63
// nano-dollars, where Redis's integer arithmetic fails and the budget store looks broken. One
// bound for both dialects keeps every such product exact; a model's own limit applies below it.
export const MAX_TOKENS_BOUND = 2 ** 31 - 1;

export const maxTokensBoundError = { error: `at most ${MAX_TOKENS_BOUND}; a model's own limit is lower still` };
