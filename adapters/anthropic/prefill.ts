import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { StreamPart } from "../../src/model/stream-part.ts";

// With a prefilled assistant turn ("{"), Anthropic answers with what comes AFTER the prefill.
// The client asked for the whole answer, so the prefill is put back in front of it.

export function withPrefill(response: ChatResponse, prefill: string): ChatResponse {
  const [first, ...rest] = response.content;
  if (first?.type === "text") return { ...response, content: [{ type: "text", text: prefill + first.text }, ...rest] };
  return { ...response, content: [{ type: "text", text: prefill }, ...response.content] };
}

export async function* streamWithPrefill(parts: AsyncGenerator<StreamPart>, prefill: string): AsyncGenerator<StreamPart> {
  let given = false;
  for await (const part of parts) {
    if (!given && part.type !== "start" && part.type !== "usage") {
      given = true;
      yield { type: "text-delta", text: prefill };
    }
    yield part;
  }
}
