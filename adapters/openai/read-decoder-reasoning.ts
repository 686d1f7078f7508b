/**
 * A local decoder's thinking, in the field its version uses: vLLM ≥ 0.11 and Ollama `reasoning`,
 * llama-server (and vLLM before 0.11) `reasoning_content`. One of them only: a vLLM that sends
 * both sends the same text twice.
 */
export function readDecoderReasoning(message: object | undefined): string | undefined {
  const fields = message as { reasoning?: unknown; reasoning_content?: unknown } | undefined;
  const text = fields?.reasoning || fields?.reasoning_content;
  return typeof text === "string" && text.length > 0 ? text : undefined;
}
