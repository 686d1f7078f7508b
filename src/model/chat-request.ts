// The provider-neutral request every dialect parses into and every adapter converts from.
// It keeps what some provider can act on. Fields a drop-in proxy may ignore (logprobs, penalties,
// metadata) the dialect parsers accept and drop; fields whose meaning tollgate cannot honour (n > 1,
// legacy functions) they reject with a 400 that names the field.

/**
 * The sampling options vLLM and SGLang take beyond OpenAI's (an OpenAI SDK's `extra_body`), under
 * their wire names. Each changes the answer or its length, so none may be ignored in silence.
 */
export type DecoderOptions = {
  repetition_penalty?: number;
  min_tokens?: number;
  ignore_eos?: boolean;
  stop_token_ids?: number[];
  /** Passed to the model's chat template: `{"enable_thinking": false}` turns Qwen3's thinking off. */
  chat_template_kwargs?: Record<string, unknown>;
};

export type ChatRequest = {
  /** The route the client asked for (its `model` field). */
  route: string;
  messages: ChatMessage[];
  stream: boolean;
  /** The client asked for the usage chunk in an OpenAI stream (`stream_options.include_usage`). */
  streamUsage: boolean;
  maxTokens?: number;
  /**
   * The field `maxTokens` came in, where it is not `max_tokens`: OpenAI's o-series take only
   * `max_completion_tokens`, and a refusal naming the other sends the client the wrong way.
   */
  maxTokensField?: "max_completion_tokens";
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  /** vLLM's and SGLang's own sampling options, as the client sent them: local decoders only. */
  decoderOptions?: DecoderOptions;
  seed?: number;
  /** OpenAI-shaped targets only (OpenAI, vLLM, llama-server); Anthropic has no equivalent. */
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** Token id → bias from −100 to 100 (OpenAI's tokenizer ids: OpenAI-shaped targets only). */
  logitBias?: Record<string, number>;
  stop?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call per answer (OpenAI `parallel_tool_calls`, Anthropic `disable_parallel_tool_use`). */
  parallelToolCalls?: boolean;
  /** OpenAI reasoning models' effort; passed to OpenAI-shaped targets only. */
  reasoningEffort?: ReasoningEffort;
  /**
   * Anthropic's `thinking` (extended or adaptive thinking, or `disabled`), as the client sent it:
   * Anthropic targets only, which check its fields themselves (the types keep growing).
   */
  thinking?: ThinkingConfig;
  /**
   * Anthropic's `output_config.effort` (how eagerly Claude spends tokens), as the client sent it:
   * Anthropic targets only, which say which levels each model takes.
   */
  effort?: string;
  /**
   * Anthropic's `anthropic-beta` header as the client sent it (feature names, such as
   * `context-1m-2025-08-07`): Anthropic targets only, which get it as a header. Others have no
   * such switches and go without.
   */
  anthropicBetas?: string[];
  /**
   * Anthropic's `context_management` (context editing, a beta), as the client sent it: Anthropic
   * trims the conversation before Claude reads it. Anthropic targets only; others read it whole.
   */
  contextManagement?: Record<string, unknown>;
  /**
   * Anthropic's top-level `cache_control` (automatic caching): a breakpoint Anthropic places on
   * the request's last cacheable block. Anthropic targets only; OpenAI caches on its own.
   */
  cacheLastBlock?: CacheMark;
  /** Anthropic's `service_tier` ("auto", "standard_only"): Anthropic targets only. */
  anthropicServiceTier?: string;
  /** Anthropic's `inference_geo` ("global", or "us", billed at 1.1×: src/pricing/inference-geo.ts): Anthropic targets only. */
  inferenceGeo?: string;
  responseFormat?: ResponseFormat;
  /** An end-user id for provider abuse tracking (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** OpenAI's `safety_identifier` (its successor to `user`): OpenAI gets it as such, Claude as `metadata.user_id` when no `user` is set. */
  safetyIdentifier?: string;
  /**
   * `user` is an Anthropic client's own `metadata.user_id`: Claude gets it as sent. An OpenAI
   * client's id, which OpenAI takes in any form, reaches Claude hashed where Anthropic would refuse
   * it (policies/sampling/claude-user-id.ts).
   */
  userFromAnthropic?: true;
  /** Text the assistant turn starts with (Anthropic prefill); the client sees it as part of the answer. */
  prefill?: string;
  /**
   * An Anthropic client's conversation ends with its own assistant turn (its prefill): the answer
   * continues that turn, and is the continuation only. (An OpenAI conversation ending with an
   * assistant message asks OpenAI for a new one; llama-server continues it either way.) Local
   * decoders are asked to continue it; OpenAI, which cannot, answers anew, and the OpenAI adapter
   * takes the prefill off the front of an answer that repeats it.
   */
  continueLastTurn?: true;
  /** An OpenAI client's own `prompt_cache_key`: it goes to OpenAI in place of the policy's. */
  promptCacheKey?: string;
  /** OpenAI's `prompt_cache_retention` ("in_memory", "24h"): OpenAI targets only. */
  promptCacheRetention?: string;
  /**
   * OpenAI's `logprobs: true`, with `top_logprobs` alternatives per token: OpenAI-shaped targets
   * give them; Claude and OpenAI's reasoning models give none, and the sampling policy refuses
   * the request for them.
   */
  logprobs?: { top?: number };
  /** OpenAI's stored completions (`store`) and their tags (`metadata`): OpenAI targets only. */
  store?: boolean;
  openAIMetadata?: Record<string, string>;
  /** OpenAI's `service_tier` ("auto", "default": the ones billed at standard rates): OpenAI targets only. */
  openAIServiceTier?: string;
  /** OpenAI's `verbosity` (gpt-5: "low" answers shorter): OpenAI targets that take it. */
  verbosity?: string;
  /** OpenAI's Predicted Outputs: text the answer will largely repeat. OpenAI targets only. */
  prediction?: string;
  /** Where the prompt-cache policy asks the provider to cache (each adapter uses what it supports). */
  promptCache?: PromptCacheHints;
};

export type PromptCacheHints = {
  /** Anthropic: breakpoints on the last tool, the end of the system prompt, and after each of these messages. */
  anthropic?: { ttl: "5m" | "1h"; tools: boolean; system: boolean; throughMessages?: number[] };
  /** OpenAI: `prompt_cache_key`, so requests with one prefix meet the same cache. */
  openAIKey?: string;
  /** llama-server: `cache_prompt`, reuse the KV cache of a matching prefix. */
  reusePrefix?: boolean;
};

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/**
 * A client's own cache breakpoint (Anthropic `cache_control`) on the block it marked: kept as sent
 * so that a client that manages its cache itself keeps its savings through tollgate.
 */
export type CacheMark = { ttl: "5m" | "1h" };

/**
 * `name`: the participant (OpenAI's messages carry it; OpenAI-shaped targets get it).
 * `content`: the system text (an OpenAI message's text parts, one line each).
 */
export type SystemMessage = { role: "system"; content: string; name?: string; cacheControl?: CacheMark };
export type UserMessage = { role: "user"; content: UserContent[]; name?: string };
export type AssistantMessage = { role: "assistant"; content: AssistantContent[]; name?: string };
/**
 * `content`: the result's text (its text blocks, one line each). `parts`: where the tool returned
 * images too (a screenshot), the result's blocks in the client's order, text and images (a
 * caption stays beside the screenshot it describes); see toolResultImages.
 */
export type ToolResultMessage = { role: "tool"; toolCallId: string; content: string; parts?: (TextContent | ImageContent)[]; isError?: boolean; cacheControl?: CacheMark };

/** The images a tool result holds, in order. */
export function toolResultImages(message: ToolResultMessage): ImageContent[] {
  return message.parts?.filter((part): part is ImageContent => part.type === "image") ?? [];
}

/** The images one message sends, in order: a user's, or a tool result's (no other message holds any). */
export function messageImages(message: ChatMessage): ImageContent[] {
  if (message.role === "user") return message.content.filter((part): part is ImageContent => part.type === "image");
  return message.role === "tool" ? toolResultImages(message) : [];
}

/** Every image a request sends, in order: where images are counted, priced or checked, this is the one walk. */
export function requestImages(request: ChatRequest): ImageContent[] {
  return request.messages.flatMap(messageImages);
}

export type TextContent = { type: "text"; text: string; cacheControl?: CacheMark };
/** `detail`: OpenAI's image resolution, which sets what an image costs there (Anthropic has none). */
export type ImageContent =
  | { type: "image"; source: "url"; url: string; detail?: ImageDetail; cacheControl?: CacheMark }
  | { type: "image"; source: "base64"; mediaType: string; data: string; detail?: ImageDetail; cacheControl?: CacheMark };
export type ImageDetail = "auto" | "low" | "high";
/** "none", "minimal", "low", "medium", "high", "xhigh", "max": whichever the target model takes. */
export type ReasoningEffort = string;
export type ToolCallContent = { type: "tool-call"; id: string; name: string; arguments: string; cacheControl?: CacheMark };

/**
 * Claude's thinking in an answer: its text (empty when the request asked not to display it) and
 * the signature that lets the answer be sent back in a later turn; or a block of thinking
 * Anthropic encrypted. Only the model that signed them can be sent them: other targets drop them.
 */
export type ThinkingContent = { type: "thinking"; text: string; signature: string } | { type: "redacted-thinking"; data: string };
export type ThinkingConfig = { type: string; [field: string]: unknown };

/** The least thinking budget Claude takes. */
export const MIN_THINKING_BUDGET = 1024;

/** Claude's extended thinking budget, where the request sets one. */
export function thinkingBudget(request: ChatRequest): number | undefined {
  const thinking = request.thinking;
  return thinking?.type === "enabled" && typeof thinking.budget_tokens === "number" ? thinking.budget_tokens : undefined;
}

export type UserContent = TextContent | ImageContent;
export type AssistantContent = TextContent | ToolCallContent | ThinkingContent;

export type ToolDefinition = {
  name: string;
  description?: string;
  /** JSON Schema of the tool's arguments. */
  parameters: Record<string, unknown>;
  /** OpenAI structured outputs for tool calls: arguments follow the schema exactly. */
  strict?: boolean;
  cacheControl?: CacheMark;
  /**
   * An Anthropic client's custom tool's fields that only Claude reads (`eager_input_streaming`,
   * `input_examples`, …), as written: Claude gets them, other targets the tool without them.
   */
  claudeOptions?: Record<string, unknown>;
  /**
   * A tool Anthropic defines and the client runs (`text_editor_20250728`, `bash_20250124`, …), as
   * the client sent it, without its cache_control: only Claude knows its schema (`parameters` is
   * empty), so other providers refuse the request.
   */
  anthropicDefined?: { type: string; name: string; [option: string]: unknown };
};

export type ToolChoice =
  | { type: "auto" }
  | { type: "none" }
  | { type: "required" }
  | { type: "tool"; name: string };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json" }
  /** `description`: what the answer is for, which OpenAI reads to fill the schema. */
  | { type: "json-schema"; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/** A message's participant name, where it has one (spread into a message object). */
export function participantName(message: { name?: string | undefined }): { name?: string } {
  return message.name ? { name: message.name } : {};
}

/** True when the client placed cache breakpoints itself. */
export function hasCacheMarks(request: ChatRequest): boolean {
  if (request.cacheLastBlock) return true;
  if (request.tools?.some((tool) => tool.cacheControl)) return true;
  return request.messages.some((message) =>
    message.role === "system" || message.role === "tool" ? Boolean(message.cacheControl) : message.content.some((part) => "cacheControl" in part && part.cacheControl),
  );
}
