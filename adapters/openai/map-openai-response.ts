import type OpenAI from "openai";
import type { AssistantContent } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import { fromOpenAIFinishReason } from "../../src/dialects/finish-reasons.ts";
import { convertOpenAIUsage } from "./convert-openai-usage.ts";
import { readDecoderTimings } from "./read-decoder-timings.ts";

export function mapOpenAIResponse(completion: OpenAI.Chat.Completions.ChatCompletion): ChatResponse {
  const choice = completion.choices[0];
  const content: AssistantContent[] = [];
  const text = choice?.message.content;
  if (text) content.push({ type: "text", text });
  const refusal = choice?.message.refusal;
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type === "function") content.push({ type: "tool-call", id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  const timings = readDecoderTimings(completion);
  return {
    id: completion.id,
    model: completion.model,
    content,
    finishReason: fromOpenAIFinishReason(choice?.finish_reason),
    ...(refusal ? { refusal } : {}),
    ...(completion.usage ? { usage: convertOpenAIUsage(completion.usage) } : {}),
    ...(timings ? { timings } : {}),
  };
}
