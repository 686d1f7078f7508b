import type { ChatModel, TransportOptions } from "../../src/model/chat-model.ts";
import { createOpenAIAdapter } from "../openai/create-openai-adapter.ts";

// vLLM, SGLang, llama.cpp's llama-server and Ollama all speak Chat Completions. They share the
// OpenAI adapter, configured for what they add (top_k, min_p) and lack (max_completion_tokens).

export type OpenAICompatibleAdapterOptions = TransportOptions & {
  name: string;
  baseUrl: string;
  apiKey?: string;
  keyVariable?: string;
  timeoutMs?: number;
  maxRetries?: number;
};

export function createOpenAICompatibleAdapter(options: OpenAICompatibleAdapterOptions): ChatModel {
  return createOpenAIAdapter({ ...options, flavor: "compatible" });
}
