import type { AssistantContent, CacheMark, ChatMessage, ChatRequest, ImageContent, ResponseFormat, TextContent, ToolChoice, ToolDefinition, UserContent } from "../../model/chat-request.ts";
import { GatewayError } from "../../errors/gateway-error.ts";
import { dropUndefined } from "../../model/drop-undefined.ts";
import { fitsOpenAIStrictMode } from "../../model/json-schema-nodes.ts";
import { zodIssueToError } from "../zod-issue-to-error.ts";
import { readAnthropicBetas } from "./anthropic-beta.ts";
import { anthropicMessagesRequestSchema, type AnthropicMessagesRequest } from "./anthropic-request-schema.ts";

/**
 * Message threads (the SDK's tool runner sends `thread` by default, and from its second turn only
 * the new messages): the conversation would have to be kept here, between requests. Refused as
 * Anthropic refuses a request it cannot thread, and the SDK then sends whole conversations.
 */
function threadsUnsupported(): GatewayError {
  return new GatewayError("invalid_request", "tollgate does not keep message threads: send the whole conversation, without `thread`", {
    param: "thread",
    details: { error_code: "thread_unsupported_request", unsupported: ["thread"] },
  });
}

export function parseAnthropicRequest(body: unknown): ChatRequest {
  if (typeof body === "object" && body !== null && (body as { thread?: unknown }).thread != null) throw threadsUnsupported();
  const parsed = anthropicMessagesRequestSchema.safeParse(body);
  if (!parsed.success) throw zodIssueToError(parsed.error.issues);
  const request = parsed.data;

  const system: ChatMessage[] = [];
  if (typeof request.system === "string" && request.system.length > 0) system.push({ role: "system", content: request.system });
  if (Array.isArray(request.system)) for (const block of request.system) system.push({ role: "system", content: block.text, ...mark(block) });

  const messages = [...system, ...request.messages.flatMap((message, index) => convertMessage(message, index))];
  return dropUndefined({
    route: request.model,
    messages,
    continueLastTurn: messages.at(-1)?.role === "assistant" ? (true as const) : undefined,
    stream: request.stream === true,
    streamUsage: false,
    maxTokens: request.max_tokens,
    temperature: request.temperature,
    topP: request.top_p,
    topK: request.top_k,
    stop: request.stop_sequences && request.stop_sequences.length > 0 ? request.stop_sequences : undefined,
    tools: request.tools?.map(convertTool),
    toolChoice: convertToolChoice(request.tool_choice),
    parallelToolCalls: request.tool_choice && "disable_parallel_tool_use" in request.tool_choice && request.tool_choice.disable_parallel_tool_use ? false : undefined,
    user: request.metadata?.user_id ?? undefined,
    userFromAnthropic: request.metadata?.user_id ? (true as const) : undefined,
    contextManagement: request.context_management ?? undefined,
    cacheLastBlock: request.cache_control ? { ttl: request.cache_control.ttl ?? "5m" } : undefined,
    anthropicServiceTier: request.service_tier,
    inferenceGeo: request.inference_geo ?? undefined,
    thinking: request.thinking ?? undefined,
    effort: request.output_config?.effort ?? undefined,
    // OpenAI-shaped targets get it as response_format; Claude models with structured outputs as
    // output_config.format, others as the format policy's schema line.
    responseFormat: requestedFormat(request),
  });
}

/** The answer's schema, from `output_config.format` or its deprecated form `output_format`, not both. */
function requestedFormat(request: AnthropicMessagesRequest): ResponseFormat | undefined {
  const format = request.output_config?.format;
  if (format && request.output_format) {
    throw new GatewayError("invalid_request", "output_format: send the schema once, as output_config.format (output_format is its deprecated form): remove output_format", { param: "output_format" });
  }
  const asked = format ?? request.output_format;
  return asked ? outputFormat(asked.schema) : undefined;
}

/** The request with the client's `anthropic-beta` names, which a body read on its own has not. */
export function withAnthropicBetas(request: ChatRequest, headers: Headers): ChatRequest {
  const betas = readAnthropicBetas(headers);
  return betas ? { ...request, anthropicBetas: betas } : request;
}

/**
 * A count_tokens body: a Messages request without `max_tokens` (nor anything else about the
 * answer). Read as a Messages request with a placeholder bound, which is then dropped.
 */
export function parseAnthropicCountTokensRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return parseAnthropicRequest(body);
  const { maxTokens: _placeholder, ...request } = parseAnthropicRequest({ ...body, max_tokens: 1, stream: false });
  return request;
}

type AnthropicMessage = AnthropicMessagesRequest["messages"][number];

/**
 * Anthropic carries tool results inside a user turn; the neutral model (like OpenAI) gives each
 * result its own `tool` message. Results come first: they answer the previous assistant turn.
 */
function convertMessage(message: AnthropicMessage, index: number): ChatMessage[] {
  if (typeof message.content === "string") {
    return message.role === "user"
      ? [{ role: "user", content: [{ type: "text", text: message.content }] }]
      : [{ role: "assistant", content: [{ type: "text", text: message.content }] }];
  }

  // A block in a turn that cannot hold it is a 400 at Anthropic; dropped here, it would change the
  // conversation in silence (a tool call the user "made", an image Claude "sent").
  const misplaced = message.content.findIndex((block) => (message.role === "assistant" ? block.type === "image" || block.type === "tool_result" : block.type === "tool_use"));
  if (misplaced >= 0) {
    const type = message.content[misplaced]!.type;
    const fix = type === "tool_use" ? "move it to the assistant turn that made the call" : type === "tool_result" ? "move it to the user turn after the call" : "send images in user turns";
    throw new GatewayError("invalid_request", `messages[${index}].content[${misplaced}]: ${withArticle(type)} block cannot be in ${withArticle(message.role)} turn: ${fix}`, { param: `messages[${index}].content[${misplaced}]` });
  }

  if (message.role === "assistant") {
    const content: AssistantContent[] = [];
    for (const block of message.content) {
      if (block.type === "text") content.push({ type: "text", text: block.text, ...mark(block) });
      if (block.type === "tool_use") {
        content.push({ type: "tool-call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}), ...mark(block) });
      }
      if (block.type === "thinking") content.push({ type: "thinking", text: block.thinking, signature: block.signature });
      if (block.type === "redacted_thinking") content.push({ type: "redacted-thinking", data: block.data });
    }
    return [{ role: "assistant", content }];
  }

  const toolResults: ChatMessage[] = [];
  const userContent: UserContent[] = [];
  for (const block of message.content) {
    if (block.type === "tool_result") {
      const parts = typeof block.content === "string" ? [] : block.content ?? [];
      // With images, every block in the client's order: a caption stays beside its screenshot.
      // Was: all text first, then every image, so each caption lost the image it described.
      const withImages = parts.some((part) => part.type === "image");
      toolResults.push({
        role: "tool",
        toolCallId: block.tool_use_id,
        // The neutral model keeps one text per result: its text blocks are lines of it, not one word.
        content: typeof block.content === "string" ? block.content : parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n"),
        ...(withImages ? { parts: parts.flatMap((part): (TextContent | ImageContent)[] => (part.type === "image" ? [imageOf(part)] : part.type === "text" ? [{ type: "text", text: part.text }] : [])) } : {}),
        ...(block.is_error ? { isError: true } : {}),
        ...toolResultMark(block, parts),
      });
    } else if (block.type === "text") userContent.push({ type: "text", text: block.text, ...mark(block) });
    else if (block.type === "image") {
      userContent.push({ ...imageOf(block), ...mark(block) });
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      throw new GatewayError("invalid_request", `a ${block.type} block belongs in the assistant turn Claude wrote it in, not in a user turn: move it there, unchanged`, { param: "messages" });
    }
  }
  return userContent.length > 0 ? [...toolResults, { role: "user", content: userContent }] : toolResults;
}

type ImageSource = { source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string } };

function imageOf({ source }: ImageSource): ImageContent {
  return source.type === "base64" ? { type: "image", source: "base64", mediaType: source.media_type, data: source.data } : { type: "image", source: "url", url: source.url };
}

/**
 * A tool result's breakpoint: its own, or one the client put on a block inside it, which the
 * neutral model (one text and its images) has no place for. On the tool_result block it caches
 * the same prefix, through the end of the result; a 1-hour mark inside wins over a 5-minute one.
 */
function toolResultMark(block: { cache_control?: { ttl?: "5m" | "1h" } | null }, parts: { cache_control?: { ttl?: "5m" | "1h" } | null }[]): { cacheControl?: CacheMark } {
  if (block.cache_control) return mark(block);
  const inside = parts.map((part) => mark(part).cacheControl).filter((found) => found !== undefined);
  const chosen = inside.find((found) => found.ttl === "1h") ?? inside[0];
  return chosen ? { cacheControl: chosen } : {};
}

/** A block's `cache_control`, kept (the default TTL is 5 minutes). */
function mark(block: { cache_control?: { ttl?: "5m" | "1h" } | null }): { cacheControl?: CacheMark } {
  return block.cache_control ? { cacheControl: { ttl: block.cache_control.ttl ?? "5m" } } : {};
}

type AnthropicTool = NonNullable<AnthropicMessagesRequest["tools"]>[number];

function convertTool(tool: AnthropicTool): ToolDefinition {
  if (tool.input_schema && (tool.type === undefined || tool.type === "custom")) {
    // Fields only Claude reads (eager_input_streaming, input_examples, …) go to Claude as written.
    const { type: _type, name, description, input_schema: parameters, strict, cache_control: _mark, ...claudeOptions } = tool;
    const forClaude = Object.keys(claudeOptions).length > 0 ? { claudeOptions } : {};
    return dropUndefined({ name, description, parameters, strict, ...forClaude, ...mark(tool) });
  }
  // One of Anthropic's own client tools: carried as sent, for Claude only.
  const { cache_control: _mark, ...asSent } = tool;
  return { name: tool.name, parameters: {}, anthropicDefined: { ...asSent, type: tool.type! }, ...mark(tool) };
}

function convertToolChoice(choice: AnthropicMessagesRequest["tool_choice"]): ToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === "any") return { type: "required" };
  if (choice.type === "tool") return { type: "tool", name: choice.name };
  return { type: choice.type };
}

/**
 * Claude decodes its answer to the schema (constrained decoding): on OpenAI that guarantee is
 * strict mode, asked for where the schema fits it (else OpenAI refuses the request; the schema is
 * then a hint, followed as best the model can). Without it, OpenAI took every schema as a hint.
 */
function outputFormat(schema: Record<string, unknown>): ResponseFormat {
  return { type: "json-schema", name: "output", schema, ...(fitsOpenAIStrictMode(schema) ? { strict: true } : {}) };
}

/** "an image", "a tool_use", "an assistant". */
const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;
