import { participantName, type ChatMessage, type ChatRequest, type DecoderOptions, type ImageDetail, type ResponseFormat, type ToolChoice, type UserContent } from "../../model/chat-request.ts";
import { dropUndefined } from "../../model/drop-undefined.ts";
import { GatewayError } from "../../errors/gateway-error.ts";
import { zodIssueToError } from "../zod-issue-to-error.ts";
import { openAIChatRequestSchema, type OpenAIChatRequest } from "./openai-request-schema.ts";

export function parseOpenAIRequest(body: unknown): ChatRequest {
  const parsed = openAIChatRequestSchema.safeParse(body);
  if (!parsed.success) throw zodIssueToError(parsed.error.issues);
  const request = parsed.data;
  if (request.top_logprobs != null && request.logprobs !== true) {
    throw new GatewayError("invalid_request", "top_logprobs: set logprobs to true as well (OpenAI gives alternatives only with the tokens' own log probabilities)", { param: "top_logprobs" });
  }
  const stop = typeof request.stop === "string" ? [request.stop] : request.stop ?? undefined;

  return dropUndefined({
    route: request.model,
    messages: request.messages.map(convertMessage),
    stream: request.stream === true,
    streamUsage: request.stream_options?.include_usage === true,
    // max_completion_tokens is the newer name and wins when a client sends both.
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    maxTokensField: request.max_completion_tokens != null ? "max_completion_tokens" : undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    topK: request.top_k ?? undefined,
    minP: request.min_p ?? undefined,
    decoderOptions: decoderOptions(request),
    seed: request.seed ?? undefined,
    frequencyPenalty: request.frequency_penalty ?? undefined,
    presencePenalty: request.presence_penalty ?? undefined,
    logitBias: request.logit_bias ?? undefined,
    stop: stop && stop.length > 0 ? stop : undefined,
    tools: request.tools?.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters ?? { type: "object", properties: {} },
      strict: tool.function.strict ?? undefined,
    })),
    toolChoice: convertToolChoice(request.tool_choice),
    parallelToolCalls: request.parallel_tool_calls ?? undefined,
    reasoningEffort: request.reasoning_effort ?? undefined,
    responseFormat: convertResponseFormat(request.response_format),
    user: request.user,
    safetyIdentifier: request.safety_identifier ?? undefined,
    promptCacheKey: request.prompt_cache_key ?? undefined,
    promptCacheRetention: request.prompt_cache_retention ?? undefined,
    verbosity: request.verbosity ?? undefined,
    openAIServiceTier: request.service_tier ?? undefined,
    store: request.store ?? undefined,
    openAIMetadata: request.metadata ?? undefined,
    logprobs: request.logprobs ? (request.top_logprobs != null ? { top: request.top_logprobs } : {}) : undefined,
    // Text the answer repeats verbatim: its parts are pieces of one text, joined as they are.
    prediction: request.prediction ? (typeof request.prediction.content === "string" ? request.prediction.content : request.prediction.content.map((part) => part.text).join("")) : undefined,
  });
}

/** The local decoders' own options the client set; none: undefined. */
function decoderOptions(request: OpenAIChatRequest): DecoderOptions | undefined {
  const options = dropUndefined({
    repetition_penalty: request.repetition_penalty ?? undefined,
    min_tokens: request.min_tokens ?? undefined,
    ignore_eos: request.ignore_eos ?? undefined,
    stop_token_ids: request.stop_token_ids ?? undefined,
    chat_template_kwargs: request.chat_template_kwargs ?? undefined,
  });
  return Object.keys(options).length > 0 ? options : undefined;
}

type OpenAIMessage = OpenAIChatRequest["messages"][number];

function convertMessage(message: OpenAIMessage): ChatMessage {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: partsAsLines(message.content), ...participantName(message) };
    case "user":
      return {
        role: "user",
        ...participantName(message),
        content:
          typeof message.content === "string"
            ? [{ type: "text", text: message.content }]
            : message.content.map((part): UserContent =>
                part.type === "text" ? { type: "text", text: part.text } : convertImageUrl(part.image_url.url, part.image_url.detail),
              ),
      };
    case "assistant": {
      // Each part stays a text of its own (Claude gets a block each), not run into the next.
      const parts = typeof message.content === "string" ? [message.content] : (message.content ?? []).map((part) => (part.type === "text" ? part.text : part.refusal));
      const texts = parts.filter((text) => text.length > 0);
      // What the model said when it refused is the turn's text: dropped, the turn was empty (and
      // Claude, which takes no empty turn, read the user turns around it as one).
      if (texts.length === 0 && message.refusal) texts.push(message.refusal);
      return {
        role: "assistant",
        ...participantName(message),
        content: [
          ...texts.map((text) => ({ type: "text" as const, text })),
          ...(message.tool_calls ?? []).map((call) => ({
            type: "tool-call" as const,
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          })),
        ],
      };
    }
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, content: partsAsLines(message.content) };
  }
}

/**
 * A system or tool message's text parts, as the neutral model's one text: a line each, as an
 * Anthropic client's tool_result blocks are. Was: joined with nothing, so a tool's "-3C" and
 * "snow" reached the model as "-3Csnow", and "You are terse." + "Answer in French." as
 * "You are terse.Answer in French.".
 */
function partsAsLines(content: string | { text: string }[]): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

function convertImageUrl(url: string, detail: ImageDetail | undefined): UserContent {
  const kept = detail ? { detail } : {};
  const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (dataUrl?.[1] && dataUrl[2] !== undefined) {
    return { type: "image", source: "base64", mediaType: dataUrl[1], data: dataUrl[2], ...kept };
  }
  return { type: "image", source: "url", url, ...kept };
}

function convertToolChoice(choice: OpenAIChatRequest["tool_choice"]): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === "string") return { type: choice };
  return { type: "tool", name: choice.function.name };
}

function convertResponseFormat(format: OpenAIChatRequest["response_format"]): ResponseFormat | undefined {
  if (!format) return undefined;
  if (format.type === "text") return { type: "text" };
  if (format.type === "json_object") return { type: "json" };
  return {
    type: "json-schema",
    name: format.json_schema.name,
    schema: format.json_schema.schema ?? {},
    ...(format.json_schema.strict != null ? { strict: format.json_schema.strict } : {}),
    ...(format.json_schema.description ? { description: format.json_schema.description } : {}),
  };
}
