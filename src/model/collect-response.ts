import type { AssistantContent, ThinkingContent } from "./chat-request.ts";
import type { ChatResponse } from "./chat-response.ts";
import type { FinishReason, OpenAIAnnotation, OpenAIAnswerIdentity, OpenAIUsageDetails, RefusalDetails, StreamPart, TokenLogprob } from "./stream-part.ts";
import { INPUT_FIELDS, mergeUsage, type Usage } from "./usage.ts";

/**
 * Rebuilds the whole answer from a stream's parts (to keep a streamed answer in the response
 * cache), its blocks in the order they came: Claude's thinking between tool calls must be sent
 * back as Claude produced it.
 */
export class ResponseCollector {
  private id = "";
  private model = "";
  private refusal = "";
  private annotations: OpenAIAnnotation[] | undefined;
  private reasoning = "";
  private readonly content: AssistantContent[] = [];
  private readonly toolCalls = new Map<number, Extract<AssistantContent, { type: "tool-call" }>>();
  /** A thinking block still waiting for its signature. */
  private openThinking: Extract<ThinkingContent, { type: "thinking" }> | undefined;
  private finishReason: FinishReason = "other";
  private stopSequence: string | undefined;
  private refusalDetails: RefusalDetails | undefined;
  private contextManagement: Record<string, unknown> | undefined;
  private usage: Usage | undefined;
  private usageDetails: OpenAIUsageDetails | undefined;
  private logprobs: TokenLogprob[] | undefined;
  private refusalLogprobs: TokenLogprob[] | undefined;
  private identity: OpenAIAnswerIdentity = {};
  private inferenceGeo: string | undefined;
  private anthropicServiceTier: string | undefined;

  add(part: StreamPart): void {
    switch (part.type) {
      case "start":
        this.id = part.id;
        this.model = part.model;
        this.identity = {
          ...(part.systemFingerprint ? { systemFingerprint: part.systemFingerprint } : {}),
          ...(part.serviceTier ? { serviceTier: part.serviceTier } : {}),
          ...(part.created !== undefined ? { created: part.created } : {}),
        };
        this.inferenceGeo = part.inferenceGeo;
        this.anthropicServiceTier = part.anthropicServiceTier;
        break;
      case "text-delta": {
        if (part.refusal) {
          this.refusal += part.text;
          if (part.logprobs) (this.refusalLogprobs ??= []).push(...part.logprobs);
          break;
        }
        this.openThinking = undefined;
        if (part.logprobs) (this.logprobs ??= []).push(...part.logprobs);
        const last = this.content.at(-1);
        if (last?.type === "text" && !part.newBlock) last.text += part.text;
        else this.content.push({ type: "text", text: part.text });
        break;
      }
      case "annotations":
        (this.annotations ??= []).push(...part.annotations);
        break;
      case "reasoning-delta":
        this.reasoning += part.text;
        if (part.signed) this.thinking().text += part.text;
        break;
      case "reasoning-signature":
        this.thinking().signature = part.signature;
        this.openThinking = undefined;
        break;
      case "redacted-reasoning":
        this.content.push({ type: "redacted-thinking", data: part.data });
        this.openThinking = undefined;
        break;
      case "tool-call-start": {
        this.openThinking = undefined;
        const call = { type: "tool-call" as const, id: part.id, name: part.name, arguments: "" };
        this.toolCalls.set(part.index, call);
        this.content.push(call);
        break;
      }
      case "tool-call-delta": {
        const call = this.toolCalls.get(part.index);
        if (call) call.arguments += part.argumentsDelta;
        break;
      }
      case "finish":
        this.finishReason = part.reason;
        this.stopSequence = part.stopSequence;
        this.refusalDetails = part.refusalDetails;
        this.contextManagement = part.contextManagement;
        break;
      case "usage":
        this.usage = mergeUsage(this.usage, part.usage);
        if (part.openAIDetails) this.usageDetails = part.openAIDetails;
        break;
      default:
        break;
    }
  }

  private thinking(): Extract<ThinkingContent, { type: "thinking" }> {
    if (!this.openThinking) {
      this.openThinking = { type: "thinking", text: "", signature: "" };
      this.content.push(this.openThinking);
    }
    return this.openThinking;
  }

  response(): ChatResponse {
    return {
      id: this.id,
      model: this.model,
      content: this.content.map((block) => ({ ...block })),
      finishReason: this.finishReason,
      ...(this.stopSequence ? { stopSequence: this.stopSequence } : {}),
      ...(this.refusalDetails ? { refusalDetails: this.refusalDetails } : {}),
      ...(this.contextManagement ? { contextManagement: this.contextManagement } : {}),
      ...(this.refusal ? { refusal: this.refusal } : {}),
      ...(this.annotations ? { annotations: this.annotations } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...(this.logprobs ? { logprobs: this.logprobs } : {}),
      ...(this.refusalLogprobs ? { refusalLogprobs: this.refusalLogprobs } : {}),
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.usageDetails ? { openAIUsageDetails: this.usageDetails } : {}),
      ...(this.inferenceGeo ? { inferenceGeo: this.inferenceGeo } : {}),
      ...(this.anthropicServiceTier ? { anthropicServiceTier: this.anthropicServiceTier } : {}),
      ...this.identity,
    };
  }
}

/** A whole answer as the stream parts an adapter would have produced (to stream a cached answer). */
export function* responseToParts(response: ChatResponse): Generator<StreamPart> {
  yield {
    type: "start",
    id: response.id,
    model: response.model,
    ...(response.systemFingerprint ? { systemFingerprint: response.systemFingerprint } : {}),
    ...(response.serviceTier ? { serviceTier: response.serviceTier } : {}),
    ...(response.created !== undefined ? { created: response.created } : {}),
    ...(response.inferenceGeo ? { inferenceGeo: response.inferenceGeo } : {}),
    ...(response.anthropicServiceTier ? { anthropicServiceTier: response.anthropicServiceTier } : {}),
  };
  // The input side first, as a live stream has it from its start (Anthropic's message_start,
  // which tools read input_tokens from); the whole usage comes again at the end.
  const input = response.usage && inputSide(response.usage);
  if (input) yield { type: "usage", usage: input };
  // Claude's thinking is in `content`, signed; `reasoning` alone is a local decoder's.
  const signed = response.content.some((content) => content.type === "thinking" || content.type === "redacted-thinking");
  if (response.reasoning && !signed) yield { type: "reasoning-delta", text: response.reasoning };
  if (response.refusal) {
    yield response.refusalLogprobs
      ? { type: "text-delta", text: response.refusal, refusal: true, logprobs: response.refusalLogprobs }
      : { type: "text-delta", text: response.refusal, refusal: true };
  }
  let index = 0;
  let logprobsSent = false;
  let previous: ChatResponse["content"][number] | undefined;
  for (const content of response.content) {
    switch (content.type) {
      case "text": {
        // A text block right after another stays a block of its own, as in the answer not streamed.
        const part: StreamPart = previous?.type === "text" ? { type: "text-delta", text: content.text, newBlock: true } : { type: "text-delta", text: content.text };
        // The whole answer's log probabilities go with its first text (OpenAI-shaped answers have one).
        if (response.logprobs && !logprobsSent) {
          part.logprobs = response.logprobs;
          logprobsSent = true;
        }
        yield part;
        break;
      }
      case "tool-call":
        yield { type: "tool-call-start", index, id: content.id, name: content.name };
        yield { type: "tool-call-delta", index, argumentsDelta: content.arguments };
        index++;
        break;
      case "thinking":
        if (content.text) yield { type: "reasoning-delta", text: content.text, signed: true };
        yield { type: "reasoning-signature", signature: content.signature };
        break;
      case "redacted-thinking":
        yield { type: "redacted-reasoning", data: content.data };
        break;
    }
    previous = content;
  }
  if (response.annotations) yield { type: "annotations", annotations: response.annotations };
  yield {
    type: "finish",
    reason: response.finishReason,
    ...(response.stopSequence ? { stopSequence: response.stopSequence } : {}),
    ...(response.refusalDetails ? { refusalDetails: response.refusalDetails } : {}),
    ...(response.contextManagement ? { contextManagement: response.contextManagement } : {}),
  };
  // The usage the answer was made with, as the unstreamed answer shows it too.
  if (response.usage) {
    yield response.openAIUsageDetails ? { type: "usage", usage: response.usage, openAIDetails: response.openAIUsageDetails } : { type: "usage", usage: response.usage };
  }
}

/** The input-side counts of a usage, or undefined where it has none. */
function inputSide(usage: Usage): Usage | undefined {
  const input: Usage = {};
  for (const key of INPUT_FIELDS) {
    if (usage[key] !== undefined) input[key] = usage[key];
  }
  return Object.keys(input).length > 0 ? input : undefined;
}
