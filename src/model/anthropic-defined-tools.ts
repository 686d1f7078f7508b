import type { ChatRequest } from "./chat-request.ts";

// Anthropic's own client tools (its text editor, bash, computer use, memory) are sent as a
// versioned type and a name, and Claude reads them expanded into their schema. Their pages give
// the input tokens each adds: the text editor 700, bash 245, computer use 735 plus a system prompt
// of 466–499. The memory tool gives no figure.

const DOCUMENTED_TOKENS: Readonly<Record<string, number>> = { text_editor: 700, bash: 245, computer: 735 + 499 };

/** The most one such tool is taken to add, for bounds that must not fall short: above the largest documented, with room. */
export const ANTHROPIC_DEFINED_TOOL_BOUND = 2000;

/** The input tokens the request's Anthropic-defined tools add, as their pages give them (0 where none is given). */
export function documentedToolTokens(request: ChatRequest): number {
  let tokens = 0;
  for (const tool of request.tools ?? []) {
    const kind = tool.anthropicDefined?.type.replace(/_\d{8}$/, "");
    if (kind) tokens += DOCUMENTED_TOKENS[kind] ?? 0;
  }
  return tokens;
}
