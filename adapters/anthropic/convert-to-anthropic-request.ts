import type Anthropic from "@anthropic-ai/sdk";
import { messageImages, type CacheMark, type ChatMessage, type ChatRequest, type ImageContent, type TextContent, type ToolChoice } from "../../src/model/chat-request.ts";
import { parseToolArguments } from "../../src/dialects/anthropic/render-anthropic-response.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { claudeDecodedSchema, claudeTakesStructuredOutputs, claudeTools } from "../../src/model/claude-structured-outputs.ts";

// Neutral request → Messages body. Anthropic differs from the neutral model in three ways that
// matter here: system text is top-level, roles must alternate (consecutive turns of one role
// are merged, tool results ride in a user turn), and max_tokens is required.

/** Used when the client (an OpenAI-dialect client) sent no max_tokens; Anthropic requires one. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

// SDK 1.x dropped the sampling fields from its types (the newest models accept only defaults);
// the API still takes them for the models that do, so tollgate keeps sending what was asked.
type SamplingParams = { temperature?: number; top_p?: number; top_k?: number };
/** Context editing is a beta field, which the GA request type does not have. */
type BetaParams = { context_management?: Record<string, unknown> };
type Body = Anthropic.Messages.MessageCreateParamsNonStreaming & SamplingParams & BetaParams;
type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlock = Anthropic.Messages.ContentBlockParam;

export function convertToAnthropicRequest(request: ChatRequest, model: string): Body {
  const systemBlocks: Anthropic.Messages.TextBlockParam[] = [];
  const messages: MessageParam[] = [];
  // The format instruction is already the system prompt's first line: the format policy puts it
  // there for every route. A schema is also sent as output_config.format where Claude takes it.
  const cache = request.promptCache?.anthropic;
  const cacheControl = cache ? { type: "ephemeral" as const, ttl: cache.ttl } : undefined;

  request.messages.forEach((message, index) => {
    if (message.role === "system") {
      if (!hasText(message.content)) return;
      systemBlocks.push({ type: "text", text: message.content, ...cacheControlOf(message.cacheControl) });
      return;
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = convertContent(message);
    // Anthropic refuses a turn with no content (OpenAI clients replay an empty answer as
    // `content: ""`); consecutive turns of one role are merged anyway, so the empty one goes.
    if (blocks.length === 0) return;
    const last = blocks.at(-1);
    if (cacheControl && cache?.throughMessages?.includes(index) && last && last.type !== "thinking" && last.type !== "redacted_thinking") {
      last.cache_control = cacheControl;
    }
    const previous = messages.at(-1);
    if (previous && previous.role === role) (previous.content as ContentBlock[]).push(...blocks);
    else messages.push({ role, content: blocks });
  });
  // Prefill: the answer continues from this text; the adapter gives it back to the client.
  if (request.prefill) messages.push({ role: "assistant", content: request.prefill });

  const body: Body = { model, max_tokens: request.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS, messages };
  if (systemBlocks.length > 0) {
    body.system = systemBlocks;
    if (cacheControl && cache?.system) body.system.at(-1)!.cache_control = cacheControl;
  }
  // OpenAI allows temperature up to 2; Anthropic up to 1.
  if (request.temperature !== undefined) body.temperature = Math.min(request.temperature, 1);
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  // Anthropic refuses a stop sequence of whitespace alone (OpenAI clients often send "\n"). The stop
  // policy drops those with a warning in the record; this is the last guard, for any caller
  // that did not go through it, since one such sequence would fail the whole request.
  const stop = request.stop?.filter(hasText);
  if (stop?.length) body.stop_sequences = stop;
  if (request.tools?.length) {
    // Models without structured outputs refuse `strict`: they get the tools without it.
    const shaped = claudeTools(request.tools, model);
    body.tools = request.tools.map((tool, index): Anthropic.Messages.ToolUnion => {
      // Anthropic's own client tools (the text editor, bash, …): Claude knows their schema.
      if (tool.anthropicDefined) {
        // Like a custom tool's, `strict` goes only to models with structured outputs.
        const { strict: _strict, ...options } = tool.anthropicDefined;
        const asSent = claudeTakesStructuredOutputs(model) ? tool.anthropicDefined : options;
        return { ...asSent, ...cacheControlOf(tool.cacheControl) } as Anthropic.Messages.ToolUnion;
      }
      const { strict, parameters } = shaped[index]!;
      return {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        input_schema: { type: "object", ...parameters } as Anthropic.Messages.Tool.InputSchema,
        ...(strict !== undefined ? { strict } : {}),
        ...tool.claudeOptions,
        ...cacheControlOf(tool.cacheControl),
      };
    });
  }
  const decoded = claudeDecodedSchema(request.responseFormat, model);
  if (decoded || request.effort) {
    body.output_config = {
      ...(decoded ? { format: { type: "json_schema" as const, schema: decoded } } : {}),
      ...(request.effort ? { effort: request.effort as Anthropic.Messages.OutputConfig["effort"] } : {}),
    };
  }
  if (cacheControl && cache?.tools && body.tools?.length) body.tools.at(-1)!.cache_control = cacheControl;
  if (request.toolChoice) body.tool_choice = convertToolChoice(request.toolChoice);
  // One tool call per answer: Anthropic says it on the tool choice, which then must be present.
  if (request.parallelToolCalls === false && body.tools?.length && body.tool_choice?.type !== "none") {
    body.tool_choice = { ...(body.tool_choice ?? { type: "auto" }), disable_parallel_tool_use: true };
  }
  if (request.contextManagement) body.context_management = request.contextManagement;
  if (request.cacheLastBlock) body.cache_control = cacheControlOf(request.cacheLastBlock).cache_control!;
  if (request.anthropicServiceTier) body.service_tier = request.anthropicServiceTier as Body["service_tier"];
  if (request.inferenceGeo) body.inference_geo = request.inferenceGeo;
  const endUser = request.user ?? request.safetyIdentifier;
  if (endUser) body.metadata = { user_id: endUser };
  if (request.thinking) body.thinking = request.thinking as unknown as Anthropic.Messages.ThinkingConfigParam;
  return body;
}

function convertContent(message: Exclude<ChatMessage, { role: "system" }>): ContentBlock[] {
  switch (message.role) {
    case "user":
      // Anthropic refuses empty text blocks; OpenAI accepts them.
      return message.content.filter((part) => part.type !== "text" || hasText(part.text)).map((part): ContentBlock => {
        if (part.type === "text") return { type: "text", text: part.text, ...cacheControlOf(part.cacheControl) };
        return { ...imageBlock(part), ...cacheControlOf(part.cacheControl) };
      });
    case "assistant":
      return message.content
        .filter((part) => part.type !== "text" || hasText(part.text))
        .map((part): ContentBlock => {
          switch (part.type) {
            case "text":
              return { type: "text", text: part.text, ...cacheControlOf(part.cacheControl) };
            case "tool-call":
              return { type: "tool_use", id: claudeToolId(part.id), name: part.name, input: parseToolArguments(part.arguments), ...cacheControlOf(part.cacheControl) };
            // Sent back as Claude signed them: a tool-use turn's thinking must come back unchanged.
            case "thinking":
              return { type: "thinking", thinking: part.text, signature: part.signature };
            case "redacted-thinking":
              return { type: "redacted_thinking", data: part.data };
          }
        });
    case "tool": {
      const content = message.parts ? message.parts.flatMap(toolResultBlock) : message.content;
      return [
        {
          type: "tool_result",
          tool_use_id: claudeToolId(message.toolCallId),
          // A function that returned nothing (the openai SDK's runTools sends ""): a result
          // without content, which Anthropic takes, rather than blank text, which it refuses.
          ...((typeof content === "string" ? hasText(content) : content.length > 0) ? { content } : {}),
          ...(message.isError ? { is_error: true } : {}),
          ...cacheControlOf(message.cacheControl),
        },
      ];
    }
  }
}

function imageBlock(image: ImageContent): Anthropic.Messages.ImageBlockParam {
  return image.source === "url"
    ? { type: "image", source: { type: "url", url: image.url } }
    : { type: "image", source: { type: "base64", media_type: claudeImageType(image.mediaType) as ClaudeImageType, data: image.data } };
}

/** The image types Claude takes; anything else is refused before the call (refuseImageType). */
const CLAUDE_IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
type ClaudeImageType = (typeof CLAUDE_IMAGE_TYPES)[number];

/** `image/jpg`, a common label that OpenAI takes, is `image/jpeg` to Anthropic, which refuses the other spelling. */
function claudeImageType(mediaType: string): string {
  const type = mediaType.trim().toLowerCase();
  return type === "image/jpg" ? "image/jpeg" : type;
}

/**
 * An inline image of a type Claude does not take (`image/bmp`, `image/svg+xml`, …) would be a 400
 * from Anthropic: refused here instead, so the route may try its next target or the client is
 * told which types to send.
 */
export function refuseImageType(request: ChatRequest, providerName: string): GatewayError | undefined {
  for (const [index, message] of request.messages.entries()) {
    for (const image of messageImages(message)) {
      if (image.source !== "base64" || (CLAUDE_IMAGE_TYPES as readonly string[]).includes(claudeImageType(image.mediaType))) continue;
      return new GatewayError(
        "invalid_request",
        `messages[${index}] holds an image of type ${image.mediaType}, which provider "${providerName}" does not take: send it as ${CLAUDE_IMAGE_TYPES.join(", ")}`,
        { param: `messages[${index}]` },
      );
    }
  }
  return undefined;
}

/** A block of a tool result, in the order the client gave them; blank text goes (Anthropic refuses it). */
function toolResultBlock(part: TextContent | ImageContent): (Anthropic.Messages.TextBlockParam | Anthropic.Messages.ImageBlockParam)[] {
  if (part.type === "image") return [imageBlock(part)];
  return hasText(part.text) ? [{ type: "text", text: part.text }] : [];
}

/**
 * Turns of whitespace alone are dropped (Anthropic refuses blank text). When that leaves the
 * conversation ending with an assistant turn, Anthropic would read that turn as a prefill to
 * continue (models from 4.6 on refuse prefills outright) instead of answering the user: refused
 * here, so the route tries its next target or the client is told what to send.
 */
export function refuseBlankLastTurn(request: ChatRequest, providerName: string): GatewayError | undefined {
  let droppedUserTurn = false;
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]!;
    if (message.role === "system") continue;
    const kept = convertContent(message).length > 0;
    // A blank assistant turn is dropped too: the conversation then ends with the turn before it.
    if (message.role === "assistant") {
      if (kept) break;
      continue;
    }
    if (kept) return undefined;
    droppedUserTurn = true;
  }
  if (!droppedUserTurn) return undefined;
  return new GatewayError(
    "invalid_request",
    `the last user message holds only whitespace, which provider "${providerName}" refuses (dropped, the turn before it would be continued instead of answered): send some text in it`,
    { param: "messages" },
  );
}

/** The ids Anthropic takes for a tool call; claudeToolId adds TOOL_ID_SUFFIX_BYTES to any other. */
export const CLAUDE_TOOL_ID = /^[a-zA-Z0-9_-]+$/;
export const TOOL_ID_SUFFIX_BYTES = 9;

/**
 * A tool call's id as Anthropic takes it: `^[a-zA-Z0-9_-]+$` (its 400: "tool_use.id: String
 * should match pattern"). Other models' ids may hold more: Kimi K2's `functions.get_weather:0`,
 * served by vLLM, in a conversation a route then sends to Claude. The characters Anthropic
 * refuses become `_`, and a hash of the whole id keeps two ids that differ only there apart; the
 * call and its result are mapped alike, so they still pair. Ids Anthropic takes go as they are.
 */
export function claudeToolId(id: string): string {
  if (CLAUDE_TOOL_ID.test(id)) return id;
  let hash = 0x811c9dc5; // FNV-1a, 32 bits
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01000193);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, "_")}_${(hash >>> 0).toString(16).padStart(8, "0")}`;
}

/** Anthropic refuses text blocks and stop sequences of whitespace alone. */
function hasText(text: string): boolean {
  return text.trim().length > 0;
}

/** A client's own breakpoint, as it sent it. */
function cacheControlOf(mark: CacheMark | undefined): { cache_control?: { type: "ephemeral"; ttl: "5m" | "1h" } } {
  return mark ? { cache_control: { type: "ephemeral", ttl: mark.ttl } } : {};
}

function convertToolChoice(choice: ToolChoice): Anthropic.Messages.ToolChoice {
  if (choice.type === "required") return { type: "any" };
  if (choice.type === "tool") return { type: "tool", name: choice.name };
  return { type: choice.type };
}
