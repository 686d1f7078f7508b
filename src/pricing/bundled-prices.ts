import type { UsdPerMillion } from "./rates.ts";

// The price list tollgate ships with, in USD per 1M tokens as the providers publish them. Each
// entry says where its figures come from and when they were read: re-check before billing, and
// override per provider or model in config when a contract differs.
//
// OpenAI bills cached input at its own rate and has no cache-write premium (writes are ordinary
// input). Anthropic bills 5-minute writes at 1.25x input, 1-hour writes at 2x, reads at 0.1x.

export type BundledPrice = {
  provider: "openai" | "anthropic";
  /** The model id as the API takes it; dated snapshots (`-2024-08-06`, `-20250929`) match it too. */
  model: string;
  /** Other ids the provider documents for the same model (Anthropic's `claude-sonnet-4-0`). */
  aliases?: readonly string[];
  price: Required<UsdPerMillion>;
  /** Prices that apply instead when the whole input (cache included) is above the threshold. */
  longContext?: { aboveInputTokens: number; price: Required<UsdPerMillion> };
  /** OpenAI: the prices of a call its answer says was served at the "priority" tier. */
  priority?: { price: Required<UsdPerMillion>; source: string; asOf: string };
  source: string;
  /** When the figures were read at the source. */
  asOf: string;
  limits?: ModelLimits;
  /** The day (UTC) from which the provider's API refuses the model, once it is announced. */
  retirement?: ModelRetirement;
};

export type ModelRetirement = { on: string; source: string };

/** What a model accepts, for the policies that must not send it what it would refuse. */
export type ModelLimits = {
  /** The most output tokens one answer may have. */
  maxOutputTokens?: number;
  /** Anthropic: the shortest prefix that can be cached; a breakpoint on less is ignored. */
  minCacheTokens?: number;
  /** How many stop sequences it takes (0: none at all). */
  maxStopSequences?: number;
  /** Rejects non-default temperature / top_p / top_k (OpenAI o-series, the newest Claude models). */
  fixedSampling?: boolean;
  /**
   * OpenAI: true for a reasoning model (o-series), which also refuses top_p, the penalties and
   * logit_bias (platform.openai.com/docs/guides/reasoning, "limitations"); false for a chat model
   * (gpt-4o, gpt-4.1), which refuses reasoning_effort. Unknown models: neither is assumed.
   */
  reasoning?: boolean;
  /**
   * Anthropic: may run inference in the US only (`inference_geo: "us"`, billed at 1.1×), asked
   * for or as the workspace's default, which tollgate cannot see: admission reserves that price
   * unless the request says "global". Opus 4.6, Sonnet 4.6 and later (Anthropic's data-residency
   * docs); false on the older models in this list, which refuse the field. A Claude model the
   * list does not know is taken to be a later one.
   */
  usOnlyInference?: boolean;
  /**
   * OpenAI: refuses `parallel_tool_calls`, false too (o1, o3-mini, o3, o4-mini: "Unsupported
   * parameter", as reported against the API in langchain-ai/langchain#29704, evalstate/fast-agent#279).
   */
  noParallelToolCalls?: boolean;
  /** OpenAI: refuses `verbosity`, which came with gpt-5; set on the models in this list that predate it. */
  noVerbosity?: boolean;
  /**
   * Rejects a request that sets both temperature and top_p (400 "`temperature` and `top_p` cannot
   * both be specified for this model"): Claude Opus 4.1 and the Claude 4.5 and later models.
   */
  noTemperatureWithTopP?: boolean;
  /**
   * Rejects a conversation that ends with an assistant turn (prefill): Claude 4.6 and later
   * answer it with a 400 ("This model does not support assistant message prefill").
   */
  noPrefill?: boolean;
  /**
   * Anthropic: takes structured outputs, `output_config.format` (a JSON Schema the answer is
   * decoded to) and `strict` tools. Models without it refuse them with a 400.
   */
  structuredOutputs?: boolean;
  /**
   * The most input tokens one image can bill, where it is above the budget's general bound of
   * 6,000. gpt-4o-mini bills an image at gpt-4o's dollar price, so at 2,833 tokens plus 5,667 per
   * 512 px tile (OpenAI's vision pricing): 8 tiles at most (2048 × 768 after scaling) = 48,169.
   */
  maxImageTokens?: number;
};

const OPENAI_SOURCE = "https://openai.com/api/pricing/ (via the LiteLLM price map)";
// Priority processing (`service_tier: "priority"`, or a project whose default tier is priority):
// a premium on every token, cached input still discounted. Requests above 128k prompt tokens are
// not served at that tier; their answers say "default" and are priced as such.
const OPENAI_PRIORITY_SOURCE = "https://openai.com/api-priority-processing/";
const ANTHROPIC_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing";

const openAIPrice = ([input, cachedInput, output]: Triple): Required<UsdPerMillion> => ({ input, cachedInput, cacheWrite5m: input, cacheWrite1h: input, output });

/** USD per 1M tokens: input, cached input, output. */
type Triple = readonly [number, number, number];

const openai = (model: string, standard: Triple, priority: Triple, limits: ModelLimits): BundledPrice => ({
  provider: "openai",
  model,
  price: openAIPrice(standard),
  priority: { price: openAIPrice(priority), source: OPENAI_PRIORITY_SOURCE, asOf: "2026-11" },
  source: OPENAI_SOURCE,
  asOf: "2026-07",
  limits: { maxStopSequences: 4, reasoning: false, noVerbosity: true, ...limits },
});

/** o-series reasoning models: no stop sequences, only the default temperature. */
export const REASONING: ModelLimits = { maxOutputTokens: 100_000, maxStopSequences: 0, fixedSampling: true, reasoning: true, noVerbosity: true, noParallelToolCalls: true };

/** Anthropic's cache prices are fixed multiples of input: writes 1.25x (5 min) and 2x (1 h), reads 0.1x. */
const anthropicPrice = (input: number, output: number): Required<UsdPerMillion> => ({
  input,
  cachedInput: input / 10,
  cacheWrite5m: input * 1.25,
  cacheWrite1h: input * 2,
  output,
});

const anthropic = (model: string, input: number, output: number, limits: ModelLimits, asOf = "2026-07"): BundledPrice => ({
  provider: "anthropic",
  model,
  price: anthropicPrice(input, output),
  source: ANTHROPIC_SOURCE,
  asOf,
  limits: { usOnlyInference: false, ...limits },
});

/**
 * Sonnet 4 and 4.5 with the 1M-token context: every input-side price doubles and output is 1.5x
 * when the prompt is over 200k tokens (read from the pricing page's "Long context pricing"; not
 * yet confirmed on an invoice).
 */
const sonnetLongContext = { aboveInputTokens: 200_000, price: anthropicPrice(6, 22.5) };

// Limits from the providers' model pages; prefill was removed with Claude 4.6
// (platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal). Minimum cacheable prefixes: 1024 tokens for Sonnet 4.x and
// Opus 4/4.1, 2048 for Haiku 3.5, 4096 for Haiku 4.5 and Opus 4.5+ (reports for Sonnet 4.6 conflict:
// 1024 is used, since a breakpoint below the real minimum costs nothing, it is simply not cached).
// Temperature with top_p is refused from Opus 4.1 on (reported against the API for Opus 4.1, 4.5,
// 4.6, Sonnet 4.5, 4.6 and Haiku 4.5: BerriAI/litellm#15097, OpenHands/OpenHands#12874,
// aws-samples/bedrock-access-gateway#208, Vali-98/ChatterUI#564); Sonnet 4 and Opus 4 take both.
const ONE_SAMPLER = { noTemperatureWithTopP: true } as const;
// Structured outputs are generally available for Claude Sonnet 4.5, Opus 4.5, Haiku 4.5, Opus 4.6
// and Sonnet 4.6 (platform.claude.com/docs/en/build-with-claude/structured-outputs), and Opus 4.7
// (Vertex AI's list of Claude models with structured outputs). Opus 4.1 had them in beta only,
// under another field; Sonnet 5 is left out until a source says it has them.
const STRUCTURED = { structuredOutputs: true } as const;

// Retirement days from Anthropic's model deprecations page (platform.claude.com/docs/en/about-claude/model-deprecations):
// Sonnet 4.5 as @anthropic-ai/sdk 1.12.0 warns of it ("will reach end-of-life on November 30th,
// 2026"); Sonnet 4 and Opus 4 as the release notes of 2026-06-15 announce them retired. Their
// prices stay listed: records of calls made before are still read and reported.
const DEPRECATIONS_PAGE = "https://platform.claude.com/docs/en/about-claude/model-deprecations";
const retiresOn = (on: string) => ({ retirement: { on, source: DEPRECATIONS_PAGE } });

export const BUNDLED_PRICES: readonly BundledPrice[] = [
  //     model                 standard               priority
  openai("gpt-4o",            [2.5, 1.25, 10],        [4.25, 2.125, 17], { maxOutputTokens: 16_384 }),
  // The first gpt-4o snapshot kept its launch price and has no cached-input discount; listed on
  // its own, or the dated-snapshot rule would price it as gpt-4o.
  openai("gpt-4o-2024-05-13", [5, 5, 15],             [8.75, 8.75, 26.25], { maxOutputTokens: 4_096 }),
  openai("gpt-4o-mini",       [0.15, 0.075, 0.6],     [0.25, 0.125, 1], { maxOutputTokens: 16_384, maxImageTokens: 2_833 + 8 * 5_667 }),
  openai("gpt-4.1",           [2, 0.5, 8],            [3.5, 0.875, 14], { maxOutputTokens: 32_768 }),
  openai("gpt-4.1-mini",      [0.4, 0.1, 1.6],        [0.7, 0.175, 2.8], { maxOutputTokens: 32_768 }),
  openai("gpt-4.1-nano",      [0.1, 0.025, 0.4],      [0.2, 0.05, 0.8], { maxOutputTokens: 32_768 }),
  openai("o3",                [2, 0.5, 8],            [3.5, 0.875, 14], REASONING),
  openai("o4-mini",           [1.1, 0.275, 4.4],      [2, 0.5, 8], REASONING),

  { ...anthropic("claude-sonnet-4", 3, 15, { maxOutputTokens: 64_000, minCacheTokens: 1024 }), longContext: sonnetLongContext, aliases: ["claude-sonnet-4-0"], ...retiresOn("2026-06-15") },
  { ...anthropic("claude-sonnet-4-5", 3, 15, { maxOutputTokens: 64_000, minCacheTokens: 1024, ...ONE_SAMPLER, ...STRUCTURED }), longContext: sonnetLongContext, ...retiresOn("2026-11-30") },
  anthropic("claude-sonnet-4-6", 3, 15, { usOnlyInference: true, maxOutputTokens: 64_000, minCacheTokens: 1024, noPrefill: true, ...ONE_SAMPLER, ...STRUCTURED }),
  {
    ...anthropic("claude-sonnet-5", 2, 10, { usOnlyInference: true, maxOutputTokens: 128_000, minCacheTokens: 1024, fixedSampling: true, noPrefill: true, ...ONE_SAMPLER }, "2026-11"),
    source: "https://platform.claude.com/docs/en/models/sonnet-5/overview",
  },
  anthropic("claude-haiku-4-5", 1, 5, { maxOutputTokens: 64_000, minCacheTokens: 4096, ...ONE_SAMPLER, ...STRUCTURED }),
  anthropic("claude-3-5-haiku", 0.8, 4, { maxOutputTokens: 8192, minCacheTokens: 2048 }),
  { ...anthropic("claude-opus-4", 15, 75, { maxOutputTokens: 32_000, minCacheTokens: 1024 }), aliases: ["claude-opus-4-0"], ...retiresOn("2026-06-15") },
  anthropic("claude-opus-4-1", 15, 75, { maxOutputTokens: 32_000, minCacheTokens: 1024, ...ONE_SAMPLER }),
  anthropic("claude-opus-4-5", 5, 25, { maxOutputTokens: 64_000, minCacheTokens: 4096, ...ONE_SAMPLER, ...STRUCTURED }),
  anthropic("claude-opus-4-6", 5, 25, { usOnlyInference: true, maxOutputTokens: 128_000, minCacheTokens: 4096, noPrefill: true, ...ONE_SAMPLER, ...STRUCTURED }),
  anthropic("claude-opus-4-7", 5, 25, { usOnlyInference: true, maxOutputTokens: 128_000, minCacheTokens: 4096, fixedSampling: true, noPrefill: true, ...ONE_SAMPLER, ...STRUCTURED }),
];
