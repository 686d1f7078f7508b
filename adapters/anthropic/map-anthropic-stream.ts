import type Anthropic from "@anthropic-ai/sdk";
import type { StreamPart } from "../../src/model/stream-part.ts";
import { contextManagementOf, refusalDetailsOf } from "./map-anthropic-response.ts";
import { fromAnthropicStopReason } from "../../src/dialects/finish-reasons.ts";
import { convertAnthropicUsage } from "./convert-anthropic-usage.ts";

/**
 * Messages events → stream parts. message_start carries input usage; message_delta carries the
 * stop reason and CUMULATIVE output usage (the merge takes the maximum, so nothing doubles).
 */
export async function* mapAnthropicStream(events: AsyncIterable<Anthropic.Messages.RawMessageStreamEvent>): AsyncGenerator<StreamPart> {
  const toolIndexByBlock = new Map<number, number>();
  // Tool blocks that got arguments. A call without any streams only an empty partial_json, and
  // its input is `{}` (as non-streamed): OpenAI clients JSON.parse the arguments, and "" throws.
  const withArguments = new Set<number>();
  // Claude may answer in several text blocks: the first text of each after the first says so.
  let textBlocks = 0;
  let newBlock = false;
  const text = (value: string): StreamPart => {
    const part: StreamPart = newBlock ? { type: "text-delta", text: value, newBlock: true } : { type: "text-delta", text: value };
    newBlock = false;
    return part;
  };
  for await (const event of events) {
    switch (event.type) {
      case "message_start":
        yield {
          type: "start",
          id: event.message.id,
          model: event.message.model,
          ...(event.message.usage?.inference_geo ? { inferenceGeo: event.message.usage.inference_geo } : {}),
          ...(event.message.usage?.service_tier ? { anthropicServiceTier: event.message.usage.service_tier } : {}),
        };
        yield { type: "usage", usage: convertAnthropicUsage(event.message.usage) };
        break;
      case "content_block_start":
        if (event.content_block.type === "tool_use") {
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(event.index, index);
          yield { type: "tool-call-start", index, id: event.content_block.id, name: event.content_block.name };
        } else if (event.content_block.type === "text") {
          newBlock = textBlocks++ > 0;
          if (event.content_block.text) yield text(event.content_block.text);
        } else if (event.content_block.type === "redacted_thinking") {
          yield { type: "redacted-reasoning", data: event.content_block.data };
        } else if (event.content_block.type === "thinking" && event.content_block.thinking) {
          yield { type: "reasoning-delta", text: event.content_block.thinking, signed: true };
        }
        break;
      case "content_block_delta":
        if (event.delta.type === "text_delta") yield text(event.delta.text);
        // Thinking: output Claude generated and bills, and a sign of life for the stream's deadlines
        // through minutes of thinking (counted when a cut stream reports no usage). Signed: its
        // block ends with the signature an Anthropic client must send back in a later turn.
        else if (event.delta.type === "thinking_delta") {
          if (event.delta.thinking) yield { type: "reasoning-delta", text: event.delta.thinking, signed: true };
        } else if (event.delta.type === "signature_delta") {
          yield { type: "reasoning-signature", signature: event.delta.signature };
        } else if (event.delta.type === "input_json_delta") {
          const index = toolIndexByBlock.get(event.index);
          // Each tool_use stream opens with an empty partial_json; it carries nothing.
          if (index !== undefined && event.delta.partial_json) {
            withArguments.add(event.index);
            yield { type: "tool-call-delta", index, argumentsDelta: event.delta.partial_json };
          }
        }
        break;
      case "content_block_stop": {
        const index = toolIndexByBlock.get(event.index);
        if (index !== undefined && !withArguments.has(event.index)) yield { type: "tool-call-delta", index, argumentsDelta: "{}" };
        break;
      }
      case "message_delta":
        yield { type: "usage", usage: deltaUsage(event.usage) };
        if (event.delta.stop_reason) {
          yield {
            type: "finish",
            reason: fromAnthropicStopReason(event.delta.stop_reason),
            ...(event.delta.stop_sequence ? { stopSequence: event.delta.stop_sequence } : {}),
            ...(event.delta.stop_details ? { refusalDetails: refusalDetailsOf(event.delta.stop_details) } : {}),
            ...contextManagementOf(event),
          };
        }
        break;
      default:
        break;
    }
  }
}

/**
 * message_delta repeats the cache-write total but not its 5m/1h split, which only message_start
 * carries. Read as-is it would count a 1-hour write again as a 5-minute one, so the cache-write
 * fields are taken from message_start alone.
 */
function deltaUsage(usage: Anthropic.Messages.MessageDeltaUsage) {
  const { cacheWrite5mTokens: _5m, cacheWrite1hTokens: _1h, ...rest } = convertAnthropicUsage(usage);
  return rest;
}
