import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";

// An Anthropic client's prefill ("{") on a target that has no prefill: OpenAI reads a conversation
// ending with an assistant message as one to answer with a new message, and the model often
// writes the prefill again at its start. The client joins its prefill and the answer itself, so
// it would read "{{": a repeated prefill is taken off the front of the answer. An answer that does
// not start with it (the model carried on from it) is passed as it is. Usage is left alone: the
// provider bills what it generated.

/** The text of the client's own last assistant turn, when the answer is to continue it. */
export function prefillOf(request: ChatRequest): string {
  return request.continueLastTurn ? lastAssistantText(request) : "";
}

/** The text of the conversation's last turn, where it is the assistant's ("" otherwise). */
export function lastAssistantText(request: ChatRequest): string {
  const last = request.messages.at(-1);
  if (last?.role !== "assistant") return "";
  return last.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
}

/** The answer without the prefill it starts with; an answer that is the prefill alone has no text left. */
export function withoutRepeatedPrefill(answer: ChatResponse, prefill: string): ChatResponse {
  const first = answer.content[0];
  if (!prefill || first?.type !== "text" || !first.text.startsWith(prefill)) return answer;
  const rest = first.text.slice(prefill.length);
  // Anthropic refuses an empty text block in the next request, which the client would send back.
  return { ...answer, content: [...(rest ? [{ ...first, text: rest }] : []), ...answer.content.slice(1)] };
}

/**
 * The stream without the prefill its text starts with. Only the answer's first characters are
 * held, and only while they read like the prefill: once they differ from it, or anything but
 * text comes after them, they go on as they came; once they hold it whole, it is dropped and
 * the rest goes on. What is held is at most the prefill, which the client already has, so a
 * stream that fails while holding loses nothing of the answer.
 */
export async function* streamWithoutRepeatedPrefill(parts: AsyncIterable<StreamPart>, prefill: string): AsyncGenerator<StreamPart> {
  let held: Extract<StreamPart, { type: "text-delta" }>[] = [];
  let heldText = "";
  let deciding = prefill.length > 0;
  for await (const part of parts) {
    if (!deciding) {
      yield part;
      continue;
    }
    if (part.type !== "text-delta" || part.refusal) {
      // Before any text (the start, a local decoder's reasoning) there is nothing to decide yet.
      if (held.length > 0) {
        deciding = false;
        yield* held;
      }
      yield part;
      continue;
    }
    held.push(part);
    heldText += part.text;
    if (heldText.length < prefill.length && prefill.startsWith(heldText)) continue;
    deciding = false;
    yield* heldText.startsWith(prefill) ? dropLeading(held, prefill.length) : held;
    held = [];
  }
  if (deciding) yield* held;
}

/** The held text parts with their first `count` characters taken off (parts left empty dropped). */
function* dropLeading(parts: Extract<StreamPart, { type: "text-delta" }>[], count: number): Generator<StreamPart> {
  let left = count;
  for (const part of parts) {
    if (left >= part.text.length) {
      left -= part.text.length;
      continue;
    }
    yield left > 0 ? { ...part, text: part.text.slice(left) } : part;
    left = 0;
  }
}
