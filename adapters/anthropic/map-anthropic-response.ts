import type Anthropic from "@anthropic-ai/sdk";
import type { AssistantContent } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { RefusalDetails } from "../../src/model/stream-part.ts";
import { fromAnthropicStopReason } from "../../src/dialects/finish-reasons.ts";
import { convertAnthropicUsage } from "./convert-anthropic-usage.ts";

export function mapAnthropicResponse(message: Anthropic.Messages.Message): ChatResponse {
  const content: AssistantContent[] = [];
  let reasoning = "";
  for (const block of message.content) {
    // Claude's thinking is kept signed, for Anthropic clients, and as text for the others.
    if (block.type === "thinking") {
      reasoning += block.thinking;
      content.push({ type: "thinking", text: block.thinking, signature: block.signature });
    }
    if (block.type === "redacted_thinking") content.push({ type: "redacted-thinking", data: block.data });
    if (block.type === "text") content.push({ type: "text", text: block.text });
    if (block.type === "tool_use") content.push({ type: "tool-call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
  }
  return {
    id: message.id,
    model: message.model,
    content,
    finishReason: fromAnthropicStopReason(message.stop_reason),
    ...(reasoning ? { reasoning } : {}),
    ...(message.stop_sequence ? { stopSequence: message.stop_sequence } : {}),
    ...(message.stop_details ? { refusalDetails: refusalDetailsOf(message.stop_details) } : {}),
    usage: convertAnthropicUsage(message.usage),
    ...(message.usage.inference_geo ? { inferenceGeo: message.usage.inference_geo } : {}),
    ...(message.usage.service_tier ? { anthropicServiceTier: message.usage.service_tier } : {}),
    ...contextManagementOf(message),
  };
}

/** Claude's stop_details as tollgate keeps them (it has only refusals' so far). */
export function refusalDetailsOf(details: Anthropic.Messages.RefusalStopDetails): RefusalDetails {
  return { category: details.category ?? null, explanation: details.explanation ?? null };
}

/** What context editing did (a beta's field, on the message or on message_delta), where Anthropic said. */
export function contextManagementOf(carrier: object): { contextManagement?: Record<string, unknown> } {
  const said = (carrier as { context_management?: unknown }).context_management;
  return typeof said === "object" && said !== null ? { contextManagement: said as Record<string, unknown> } : {};
}
