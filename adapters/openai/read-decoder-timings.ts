import type { DecoderTimings } from "../../src/model/stream-part.ts";

/** llama-server adds `timings` to its last chunk and to non-streamed answers; others send nothing. */
export function readDecoderTimings(payload: unknown): DecoderTimings | undefined {
  const timings = (payload as { timings?: Record<string, unknown> } | null)?.timings;
  if (!timings || typeof timings.prompt_n !== "number" || typeof timings.predicted_n !== "number") return undefined;
  return {
    promptTokens: timings.prompt_n,
    promptMs: Number(timings.prompt_ms ?? 0),
    generatedTokens: timings.predicted_n,
    generationMs: Number(timings.predicted_ms ?? 0),
    ...(typeof timings.cache_n === "number" ? { cachedTokens: timings.cache_n } : {}),
  };
}
