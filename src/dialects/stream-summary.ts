// The figures tollgate appends to every stream, after the point where the official SDKs stop
// reading (after `data: [DONE]` for OpenAI; a data-only event, which the Anthropic SDK skips).
export type StreamSummary = {
  requestId: string;
  route: string;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  ttftMs: number | null;
};
