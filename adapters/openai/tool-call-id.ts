/**
 * A tool call's id, or a new one where the server sent none (some decoders leave it out, or send
 * ""). New ids are unique: numbered by position (`call_0`), the calls of two turns of one
 * conversation shared ids, and Anthropic refuses a conversation whose tool_use ids repeat, as a
 * client pairing results by id would mismatch them.
 */
export function toolCallIdOrNew(id: string | null | undefined): string {
  return typeof id === "string" && id !== "" ? id : `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
