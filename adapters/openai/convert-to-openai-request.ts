import type OpenAI from "openai";
import { meetsOpenAIStrictRules } from "../../src/model/json-schema-nodes.ts";
import type { ChatCompletionCreateParamsBase } from "openai/resources/chat/completions/completions";
import { participantName, toolResultImages, type ChatMessage, type ChatRequest, type DecoderOptions, type ImageContent, type ResponseFormat, type SystemMessage, type ToolChoice } from "../../src/model/chat-request.ts";

/** What a failed tool's result starts with on Chat Completions, which has no is_error. */
const TOOL_ERROR_PREFIX = "Error: ";

// Neutral request → Chat Completions body. One converter serves OpenAI itself and the
// OpenAI-compatible local decoders; `flavor` says which extensions the target speaks.

export type OpenAIFlavor = "openai" | "compatible";

/** The body without `stream`, which the adapter sets as a literal so the SDK picks its return type. */
export type OpenAIRequestBody = Omit<ChatCompletionCreateParamsBase, "stream"> &
  DecoderOptions & {
  top_k?: number;
  min_p?: number;
  cache_prompt?: boolean;
  continue_final_message?: boolean;
  add_generation_prompt?: boolean;
};

export function convertToOpenAIRequest(request: ChatRequest, model: string, flavor: OpenAIFlavor): OpenAIRequestBody {
  const messages = flavor === "compatible" ? withOneLeadingSystem(request.messages) : request.messages;
  const body: OpenAIRequestBody = { model, messages: convertMessages(messages) };
  if (request.maxTokens !== undefined) {
    // OpenAI's reasoning models reject max_tokens; Ollama and older servers know only max_tokens.
    if (flavor === "openai") body.max_completion_tokens = request.maxTokens;
    else body.max_tokens = request.maxTokens;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (flavor === "compatible") {
    if (request.topK !== undefined) body.top_k = request.topK;
    if (request.minP !== undefined) body.min_p = request.minP;
    if (request.decoderOptions) Object.assign(body, request.decoderOptions);
  }
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.logitBias) body.logit_bias = request.logitBias;
  if (request.stop) body.stop = request.stop;
  if (request.logprobs) {
    body.logprobs = true;
    // llama-server reads a missing top_logprobs as 20 alternatives and 0 as no log probabilities
    // at all (n_probs): local decoders are asked for at least 1, and the adapter keeps what the
    // client asked for (none by default, as on OpenAI).
    if (flavor === "compatible") body.top_logprobs = Math.max(1, request.logprobs.top ?? 0);
    else if (request.logprobs.top !== undefined) body.top_logprobs = request.logprobs.top;
  }
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        parameters: tool.parameters,
        // Anthropic's strict tools may leave properties optional; OpenAI refuses such a schema in
        // strict mode with a 400, so it gets the tool as it is, without the guarantee.
        ...(tool.strict === false || (tool.strict === true && meetsOpenAIStrictRules(tool.parameters)) ? { strict: tool.strict } : {}),
      },
    }));
  }
  // Both only alongside tools: OpenAI (and vLLM) refuse tool_choice and parallel_tool_calls in a
  // request without any, which an Anthropic client's agent loop sends with tool_choice every turn.
  if (request.toolChoice && request.tools?.length) body.tool_choice = convertToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined && request.tools?.length) body.parallel_tool_calls = request.parallelToolCalls;
  // The SDK's list of levels may trail OpenAI's; the model judges the value.
  if (request.reasoningEffort) body.reasoning_effort = request.reasoningEffort as OpenAI.ReasoningEffort;
  if (request.responseFormat) body.response_format = convertResponseFormat(request.responseFormat);
  if (request.user) body.user = request.user;
  if (flavor === "openai" && request.safetyIdentifier) body.safety_identifier = request.safetyIdentifier;
  const cacheKey = request.promptCacheKey ?? request.promptCache?.openAIKey;
  if (flavor === "openai" && cacheKey) body.prompt_cache_key = cacheKey;
  if (flavor === "openai" && request.promptCacheRetention) body.prompt_cache_retention = request.promptCacheRetention as OpenAIRequestBody["prompt_cache_retention"];
  if (flavor === "openai" && request.store !== undefined) body.store = request.store;
  if (flavor === "openai" && request.openAIMetadata) body.metadata = request.openAIMetadata;
  if (flavor === "openai" && request.openAIServiceTier) body.service_tier = request.openAIServiceTier as OpenAIRequestBody["service_tier"];
  if (flavor === "openai" && request.verbosity) body.verbosity = request.verbosity as OpenAIRequestBody["verbosity"];
  if (flavor === "openai" && request.prediction !== undefined) body.prediction = { type: "content", content: request.prediction };
  // An Anthropic client's prefill: vLLM and SGLang open a new assistant turn unless told to
  // continue the last one (llama-server continues it either way; Ollama ignores the fields).
  if (flavor === "compatible" && request.continueLastTurn) {
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  }
  // llama-server's prefix (KV) reuse; vLLM and SGLang cache prefixes on their own.
  if (flavor === "compatible" && request.promptCache?.reusePrefix) body.cache_prompt = true;
  // Always ask for the usage chunk, even when the client did not: it is what the request costs.
  if (request.stream) body.stream_options = { include_usage: true };
  return body;
}

type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * The system messages a request opens with, as one. An Anthropic client's system blocks arrive as
 * one system message each, and many open models' chat templates (Mistral's, Gemma's) take only
 * one: served by vLLM or llama-server, a second one fails the template ("conversation roles must
 * alternate") and the decoder answers 400. OpenAI itself takes several, so it gets them apart.
 */
function withOneLeadingSystem(messages: ChatMessage[]): ChatMessage[] {
  let count = 0;
  while (messages[count]?.role === "system") count++;
  if (count < 2) return messages;
  const leading = messages.slice(0, count) as SystemMessage[];
  return [{ ...leading[0]!, content: leading.map((message) => message.content).join("\n\n") }, ...messages.slice(count)];
}

/**
 * Chat Completions' tool messages hold text only. Images a tool returned (a screenshot, from an
 * Anthropic client) go in a user message right after the tool results: not between them, since
 * every tool message must follow its assistant turn directly.
 */
function convertMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  let images: { toolCallId: string; image: ImageContent }[] = [];
  const flush = () => {
    if (images.length === 0) return;
    const ids = [...new Set(images.map(({ toolCallId }) => toolCallId))].join(", ");
    out.push({ role: "user", content: [{ type: "text", text: `Images returned by tool call ${ids}:` }, ...images.map(({ image }) => imagePart(image))] });
    images = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flush();
    out.push(convertMessage(message));
    if (message.role === "tool") for (const image of toolResultImages(message)) images.push({ toolCallId: message.toolCallId, image });
  }
  flush();
  return out;
}

function imagePart(image: ImageContent): OpenAI.Chat.Completions.ChatCompletionContentPartImage {
  return { type: "image_url", image_url: { url: image.source === "url" ? image.url : `data:${image.mediaType};base64,${image.data}`, ...(image.detail ? { detail: image.detail } : {}) } };
}

/** One message; a participant's `name` goes to every OpenAI-shaped target (vLLM's and SGLang's templates may use it). */
function convertMessage(message: ChatMessage): MessageParam {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content, ...participantName(message) };
    case "user": {
      const only = message.content[0];
      if (message.content.length === 1 && only?.type === "text") return { role: "user", content: only.text, ...participantName(message) };
      return {
        role: "user",
        ...participantName(message),
        content: message.content.map((part) => (part.type === "text" ? { type: "text" as const, text: part.text } : imagePart(part))),
      };
    }
    case "assistant": {
      const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      const toolCalls = message.content.flatMap((part) =>
        part.type === "tool-call" ? [{ id: part.id, type: "function" as const, function: { name: part.name, arguments: part.arguments } }] : [],
      );
      // null only beside tool calls: OpenAI refuses an assistant turn of `content: null` alone
      // ("expected a string, got null"), which an empty answer replayed as "" would become.
      return { role: "assistant", content: text.length > 0 || toolCalls.length === 0 ? text : null, ...participantName(message), ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
    }
    case "tool":
      // Chat Completions has no is_error: a failed tool's result says so in its text, or the
      // model would read an error message as the tool's answer.
      return { role: "tool", tool_call_id: message.toolCallId, content: message.isError ? TOOL_ERROR_PREFIX + message.content : message.content };
  }
}

function convertToolChoice(choice: ToolChoice): OpenAI.Chat.Completions.ChatCompletionToolChoiceOption {
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type;
}

function convertResponseFormat(format: ResponseFormat): NonNullable<OpenAIRequestBody["response_format"]> {
  if (format.type === "text") return { type: "text" };
  if (format.type === "json") return { type: "json_object" };
  return {
    type: "json_schema",
    json_schema: {
      name: format.name,
      ...(format.description ? { description: format.description } : {}),
      schema: format.schema,
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}
