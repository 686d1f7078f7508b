import { convertToOpenAIRequest } from "../openai/convert-to-openai-request.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { postChatCompletions, ProviderHttpError, type ChatCompletionsCall } from "./post-chat-completions.ts";

// A local decoder's own count of a prompt, for count_tokens: llama.cpp's llama-server renders
// the very body a chat request would send with its chat template (`POST /apply-template`) and
// tokenizes the result as its chat does (`POST /tokenize`, special tokens added and parsed). That
// is the prompt_tokens the chat bills, to the token, where o200k (tollgate's own tokenizer) is
// another model's vocabulary. llama-server's Anthropic count_tokens was not used: it merges a
// request's system blocks and consecutive turns, which the chat sends apart, and counted fewer.
//
// A decoder without the endpoints (404, 405, 501: vLLM, SGLang, Ollama) answers undefined, and
// the gateway counts for itself. So does a prompt with images: a template renders an image as a
// marker, and its tokens are the vision encoder's, which only a chat call counts.

const MISSING = new Set([404, 405, 501]);

export type DecoderTokenCount = (request: ChatRequest, model: string, signal: AbortSignal, headers?: Record<string, string>) => Promise<number | undefined>;

export function decoderTokenCount(baseUrl: string, call: Omit<ChatCompletionsCall, "url" | "body" | "signal" | "headers">): DecoderTokenCount {
  // llama-server serves both beside /v1, at its root.
  const root = baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const post = async (path: string, body: unknown, signal: AbortSignal, headers: Record<string, string> | undefined) =>
    (await postChatCompletions({ ...call, url: `${root}${path}`, body, signal, ...(headers ? { headers } : {}) })).json();

  return async (request, model, signal, headers) => {
    if (hasImages(request)) return undefined;
    const body = convertToOpenAIRequest({ ...request, stream: false }, model, "compatible");
    try {
      const { prompt } = (await post("/apply-template", body, signal, headers)) as { prompt?: unknown };
      if (typeof prompt !== "string") return undefined; // not llama-server's answer
      const { tokens } = (await post("/tokenize", { content: prompt, add_special: true, parse_special: true }, signal, headers)) as { tokens?: unknown };
      return Array.isArray(tokens) ? tokens.length : undefined;
    } catch (error) {
      if (error instanceof ProviderHttpError && MISSING.has(error.status)) return undefined;
      throw error;
    }
  };
}

function hasImages(request: ChatRequest): boolean {
  return request.messages.some((message) =>
    message.role === "user" ? message.content.some((part) => part.type === "image") : message.role === "tool" && (message.images?.length ?? 0) > 0,
  );
}
