import { requestImages, type ChatRequest } from "../model/chat-request.ts";

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

/**
 * What an image is counted as without a provider's count. Its real price depends on its size,
 * which tollgate does not read: this is gpt-4o's for a 1024 × 1024 image at high detail (85 + 4
 * tiles × 170), or 85 at low detail. Anthropic bills about (width × height) / 750, near 1,400
 * for the same image, but an Anthropic target counts for itself (count_tokens) and reports its
 * input when a stream starts (message_start), so its prompt is rarely estimated.
 */
const IMAGE_TOKENS = { low: 85, other: 765 };

/**
 * An estimate of the prompt tokens a request costs: every text it sends, the chat framing, and
 * each image at IMAGE_TOKENS. The one estimate of a prompt: count_tokens answers it where the
 * target cannot count, and a record bills it where the provider reported no input (a call cut
 * before its usage). Was: the record left images out, and billed a cut call's prompt of images
 * as its text alone, where count_tokens said 765 more per image.
 */
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
    }
  }
  if (request.tools?.length) texts.push(JSON.stringify(request.tools));
  const imageTokens = requestImages(request).reduce((sum, image) => sum + (image.detail === "low" ? IMAGE_TOKENS.low : IMAGE_TOKENS.other), 0);
  return REPLY_PRIMER_TOKENS + TOKENS_PER_MESSAGE * request.messages.length + imageTokens + (await counter.count(texts));
}
