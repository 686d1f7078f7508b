import type { ChatRequest } from "../model/chat-request.ts";

// Counting tokens is tollgate's fallback for when a provider reports no usage (a stream the client
// cut off, a local server that never sends usage). Records built from counts are flagged
// `estimated`. A counter never blocks the event loop for long: huge texts are counted in slices,
// yielding between them, so other requests keep flowing while a 1 MB prompt is counted, and a
// counter may bound its work per call by counting a sample of very long input (tiktoken-counter.ts),
// so a request's texts go to it in one call.

export interface TokenCounter {
  /** The tokens of the text, or of each text counted apart, summed. */
  count(texts: string | readonly string[]): Promise<number>;
}

/** Used where no tokenizer is loaded (the Workers build): UTF-8 bytes ÷ 4, the usual BPE average. */
export const approximateTokenCounter: TokenCounter = {
  async count(texts) {
    return [texts].flat().reduce((tokens, text) => tokens + Math.ceil(new TextEncoder().encode(text).length / 4), 0);
  },
};

/** OpenAI's published chat framing for the gpt-4o family: 3 tokens per message, 3 to prime the reply. */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMER_TOKENS = 3;

/** An estimate of the prompt tokens a request costs: every text it sends, plus the chat framing. */
export async function countRequestTokens(counter: TokenCounter, request: ChatRequest): Promise<number> {
  const texts: string[] = [];
  for (const message of request.messages) {
    if (message.role === "system" || message.role === "tool") {
      texts.push(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text") texts.push(part.text);
      else if (part.type === "tool-call") texts.push(part.name + part.arguments);
      // Images are billed by size in provider-specific ways; an estimate leaves them out.
    }
  }
  if (request.tools?.length) texts.push(JSON.stringify(request.tools));
  return REPLY_PRIMER_TOKENS + TOKENS_PER_MESSAGE * request.messages.length + (await counter.count(texts));
}
