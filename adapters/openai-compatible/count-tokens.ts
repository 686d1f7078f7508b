import { convertToOpenAIRequest } from "../openai/convert-to-openai-request.ts";
import type { NotCounted } from "../../src/model/chat-model.ts";
import { requestImages, type ChatRequest } from "../../src/model/chat-request.ts";
import { postChatCompletions, ProviderHttpError, type ChatCompletionsCall } from "./post-chat-completions.ts";

// A local decoder's own count of a prompt, for count_tokens: llama.cpp's llama-server renders
// the very body a chat request would send with its chat template (`POST /apply-template`) and
// tokenizes the result as its chat does (`POST /tokenize`, special tokens added and parsed). That
// is the prompt_tokens the chat bills, to the token, where o200k (tollgate's own tokenizer) is
// another model's vocabulary. llama-server's Anthropic count_tokens was not used: it merges a
// request's system blocks and consecutive turns, which the chat sends apart, and counted fewer.
//
// A decoder without the endpoints (vLLM, SGLang, Ollama: 404 or 405; a proxy in front may say
// 401, 403 or 501, or answer a page that is not JSON) answers "no-endpoint", and the gateway
// counts for itself (and asks it again only after a while). Any other failure is this request's
// or the decoder's, not a missing endpoint: a 400 for a prompt its template refuses passes on as
// the chat's would, and a decoder down or busy (5xx, 408, 429, no answer) fails the count so
// that the route's next target counts instead. A prompt with images is not sent at all
// ("not-this-request"): a template renders an image as a marker, and its tokens are the vision
// encoder's, which only a chat call counts.

/** Answers that say this server does not count, not that it failed. */
function cannotCount(error: unknown): boolean {
  if (error instanceof SyntaxError) return true; // not JSON: some other server's page at that path
  if (!(error instanceof ProviderHttpError)) return false;
  return [401, 403, 404, 405, 501].includes(error.status);
}

export type DecoderTokenCount = (request: ChatRequest, model: string, signal: AbortSignal, headers?: Record<string, string>) => Promise<number | NotCounted>;

export function decoderTokenCount(baseUrl: string, call: Omit<ChatCompletionsCall, "url" | "body" | "signal" | "headers">): DecoderTokenCount {
  // llama-server serves both beside /v1, at its root.
  const root = baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const post = async (path: string, body: unknown, signal: AbortSignal, headers: Record<string, string> | undefined) =>
    (await postChatCompletions({ ...call, url: `${root}${path}`, body, signal, ...(headers ? { headers } : {}) })).json();

  return async (request, model, signal, headers) => {
    if (requestImages(request).length > 0) return "not-this-request";
    const body = convertToOpenAIRequest({ ...request, stream: false }, model, "compatible");
    try {
      const { prompt } = (await post("/apply-template", body, signal, headers)) as { prompt?: unknown };
      if (typeof prompt !== "string") return "no-endpoint"; // not llama-server's answer
      const { tokens } = (await post("/tokenize", { content: prompt, add_special: true, parse_special: true }, signal, headers)) as { tokens?: unknown };
      return Array.isArray(tokens) ? tokens.length : "no-endpoint";
    } catch (error) {
      if (cannotCount(error)) return "no-endpoint";
      throw error;
    }
  };
}
