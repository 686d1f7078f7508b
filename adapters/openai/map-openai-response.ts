import type OpenAI from "openai";
import type { AssistantContent } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { OpenAIAnnotation, OpenAIAnswerIdentity } from "../../src/model/stream-part.ts";
import { fromOpenAIFinishReason, isUnfinishedOpenAIReason } from "../../src/dialects/finish-reasons.ts";
import { unfinishedAnswer } from "../shared/finish-check.ts";
import { convertOpenAIUsage, openAIUsageDetails } from "./convert-openai-usage.ts";
import { readDecoderReasoning } from "./read-decoder-reasoning.ts";
import { readDecoderTimings } from "./read-decoder-timings.ts";
import { finishPart } from "./finish-part.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { toolCallIdOrNew } from "./tool-call-id.ts";

/**
 * `providerName`: for the error an answer cut short (vLLM's finish_reason "abort") becomes.
 * `stop`: the stop sequences the request sent, the only ones an answer can have stopped on.
 */
export function mapOpenAIResponse(completion: OpenAI.Chat.Completions.ChatCompletion, providerName: string, stop?: readonly string[]): ChatResponse {
  // A 200 whose JSON is not a chat completion (a proxy's own answer, a wrong baseUrl path).
  if (typeof completion !== "object" || completion === null || !Array.isArray(completion.choices)) {
    throw new GatewayError("upstream", `provider "${providerName}" answered with something that is not a chat completion (no "choices"); check that its baseUrl is a Chat Completions API`, { retryable: true });
  }
  const choice = completion.choices[0];
  // Cut short, but the engine did the work: its usage bills the call.
  if (isUnfinishedOpenAIReason(choice?.finish_reason)) throw unfinishedAnswer(providerName, completion.usage ? convertOpenAIUsage(completion.usage) : undefined);
  const content: AssistantContent[] = [];
  const text = choice?.message.content;
  if (text) content.push({ type: "text", text });
  const refusal = choice?.message.refusal;
  const annotations = choice?.message.annotations;
  const reasoning = readDecoderReasoning(choice?.message);
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type === "function") content.push({ type: "tool-call", id: toolCallIdOrNew(call.id), name: call.function.name, arguments: call.function.arguments });
  }
  const timings = readDecoderTimings(completion);
  const logprobs = choice?.logprobs?.content;
  const refusalLogprobs = choice?.logprobs?.refusal;
  const usageDetails = completion.usage ? openAIUsageDetails(completion.usage) : undefined;
  return {
    id: completion.id,
    model: completion.model,
    content,
    ...finishOf(choice, stop),
    ...(refusal ? { refusal } : {}),
    ...(Array.isArray(annotations) && annotations.length > 0 ? { annotations: annotations as unknown as OpenAIAnnotation[] } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(logprobs ? { logprobs } : {}),
    ...(refusalLogprobs ? { refusalLogprobs } : {}),
    ...(completion.usage ? { usage: convertOpenAIUsage(completion.usage) } : {}),
    ...(usageDetails ? { openAIUsageDetails: usageDetails } : {}),
    ...(timings ? { timings } : {}),
    ...answerIdentity(completion),
  };
}

function finishOf(choice: OpenAI.Chat.Completions.ChatCompletion.Choice | undefined, stop: readonly string[] | undefined): Pick<ChatResponse, "finishReason" | "stopSequence"> {
  if (!choice) return { finishReason: fromOpenAIFinishReason(undefined) };
  const { reason, stopSequence } = finishPart(choice, stop);
  return { finishReason: reason, ...(stopSequence !== undefined ? { stopSequence } : {}) };
}

/** OpenAI's system_fingerprint, service_tier and created, where the server sent them (local decoders may not). */
export function answerIdentity(answer: { system_fingerprint?: string | null; service_tier?: string | null; created?: number | null }): OpenAIAnswerIdentity {
  return {
    ...(typeof answer.system_fingerprint === "string" ? { systemFingerprint: answer.system_fingerprint } : {}),
    ...(typeof answer.service_tier === "string" ? { serviceTier: answer.service_tier } : {}),
    ...(Number.isSafeInteger(answer.created) ? { created: answer.created! } : {}),
  };
}
