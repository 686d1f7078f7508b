import type { AssistantContent } from "./chat-request.ts";
import type { ChatResponse } from "./chat-response.ts";
import type { FinishReason, StreamPart } from "./stream-part.ts";
import { mergeUsage, type Usage } from "./usage.ts";

/** Rebuilds the whole answer from a stream's parts (to keep a streamed answer in the response cache). */
export class ResponseCollector {
  private id = "";
  private model = "";
  private text = "";
  private refusal = "";
  private reasoning = "";
  private readonly toolCalls = new Map<number, { id: string; name: string; arguments: string }>();
  private finishReason: FinishReason = "other";
  private stopSequence: string | undefined;
  private usage: Usage | undefined;

  add(part: StreamPart): void {
    switch (part.type) {
      case "start":
        this.id = part.id;
        this.model = part.model;
        break;
      case "text-delta":
        if (part.refusal) this.refusal += part.text;
        else this.text += part.text;
        break;
      case "reasoning-delta":
        this.reasoning += part.text;
        break;
      case "tool-call-start":
        this.toolCalls.set(part.index, { id: part.id, name: part.name, arguments: "" });
        break;
      case "tool-call-delta": {
        const call = this.toolCalls.get(part.index);
        if (call) call.arguments += part.argumentsDelta;
        break;
      }
      case "finish":
        this.finishReason = part.reason;
        this.stopSequence = part.stopSequence;
        break;
      case "usage":
        this.usage = mergeUsage(this.usage, part.usage);
        break;
      default:
        break;
    }
  }

  response(): ChatResponse {
    const content: AssistantContent[] = this.text ? [{ type: "text", text: this.text }] : [];
    for (const [, call] of [...this.toolCalls].sort(([a], [b]) => a - b)) content.push({ type: "tool-call", ...call });
    return {
      id: this.id,
      model: this.model,
      content,
      finishReason: this.finishReason,
      ...(this.stopSequence ? { stopSequence: this.stopSequence } : {}),
      ...(this.refusal ? { refusal: this.refusal } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }
}

/** A whole answer as the stream parts an adapter would have produced (to stream a cached answer). */
export function* responseToParts(response: ChatResponse): Generator<StreamPart> {
  yield { type: "start", id: response.id, model: response.model };
  if (response.reasoning) yield { type: "reasoning-delta", text: response.reasoning };
  if (response.refusal) yield { type: "text-delta", text: response.refusal, refusal: true };
  let index = 0;
  for (const content of response.content) {
    if (content.type === "text") yield { type: "text-delta", text: content.text };
    else {
      yield { type: "tool-call-start", index, id: content.id, name: content.name };
      yield { type: "tool-call-delta", index, argumentsDelta: content.arguments };
      index++;
    }
  }
  yield { type: "finish", reason: response.finishReason, ...(response.stopSequence ? { stopSequence: response.stopSequence } : {}) };
  // The usage the answer was made with, as the unstreamed answer shows it too.
  if (response.usage) yield { type: "usage", usage: response.usage };
}
