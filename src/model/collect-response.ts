import type { AssistantContent, ThinkingContent } from "./chat-request.ts";
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
  /** Claude's thinking blocks, in order; the last is open until its signature comes. */
  private readonly thinking: ThinkingContent[] = [];
  private thinkingOpen = false;
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
        if (part.signed) this.openThinking().text += part.text;
        break;
      case "reasoning-signature":
        this.openThinking().signature = part.signature;
        this.thinkingOpen = false;
        break;
      case "redacted-reasoning":
        this.thinking.push({ type: "redacted-thinking", data: part.data });
        this.thinkingOpen = false;
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

  private openThinking(): Extract<ThinkingContent, { type: "thinking" }> {
    const last = this.thinking.at(-1);
    if (this.thinkingOpen && last?.type === "thinking") return last;
    const block = { type: "thinking" as const, text: "", signature: "" };
    this.thinking.push(block);
    this.thinkingOpen = true;
    return block;
  }

  response(): ChatResponse {
    // Thinking comes before the answer it led to, as Claude sends it.
    const content: AssistantContent[] = [...this.thinking];
    if (this.text) content.push({ type: "text", text: this.text });
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
  // Claude's thinking is in `content`, signed; `reasoning` alone is a local decoder's.
  const signed = response.content.some((content) => content.type === "thinking" || content.type === "redacted-thinking");
  if (response.reasoning && !signed) yield { type: "reasoning-delta", text: response.reasoning };
  if (response.refusal) yield { type: "text-delta", text: response.refusal, refusal: true };
  let index = 0;
  for (const content of response.content) {
    switch (content.type) {
      case "text":
        yield { type: "text-delta", text: content.text };
        break;
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
  }
  yield { type: "finish", reason: response.finishReason, ...(response.stopSequence ? { stopSequence: response.stopSequence } : {}) };
  // The usage the answer was made with, as the unstreamed answer shows it too.
  if (response.usage) yield { type: "usage", usage: response.usage };
}
