import { convertToAnthropicRequest } from "../anthropic/convert-to-anthropic-request.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import { postChatCompletions, ProviderHttpError, type ChatCompletionsCall } from "./post-chat-completions.ts";

// llama.cpp's llama-server serves Anthropic's `POST /v1/messages/count_tokens` beside Chat
// Completions, counted with the model's own tokenizer and chat template: the very prompt_tokens
// a chat request bills there (o200k, tollgate's own tokenizer, is another model's vocabulary).
// The body is therefore Anthropic's wire format, not Chat Completions'. A decoder without the
// endpoint answers 404 (or 405, 501): undefined then, and the gateway counts for itself.

const MISSING = new Set([404, 405, 501]);

export type DecoderTokenCount = (request: ChatRequest, model: string, signal: AbortSignal, headers?: Record<string, string>) => Promise<number | undefined>;

export function decoderTokenCount(baseUrl: string, call: Omit<ChatCompletionsCall, "url" | "body" | "signal" | "headers">): DecoderTokenCount {
  const url = `${baseUrl.replace(/\/+$/, "")}/messages/count_tokens`;
  return async (request, model, signal, headers) => {
    const { messages, system, tools, tool_choice } = convertToAnthropicRequest(request, model);
    const body = { model, messages, ...(system ? { system } : {}), ...(tools ? { tools } : {}), ...(tool_choice ? { tool_choice } : {}) };
    try {
      const response = await postChatCompletions({ ...call, url, body, signal, ...(headers ? { headers } : {}) });
      const answer = (await response.json()) as { input_tokens?: unknown };
      if (typeof answer.input_tokens === "number" && Number.isSafeInteger(answer.input_tokens) && answer.input_tokens >= 0) return answer.input_tokens;
      return undefined; // not Anthropic's answer: some other endpoint at that path
    } catch (error) {
      if (error instanceof ProviderHttpError && MISSING.has(error.status)) return undefined;
      throw error;
    }
  };
}
