/**
 * An answer's id where the provider sent none (some local decoders): one of its own per answer,
 * in the dialect's form. Apps keep answers by id; a fixed one ("msg_tollgate") made every such
 * answer the same message to them.
 */
export function newAnswerId(prefix: "msg_" | "chatcmpl-"): string {
  return `${prefix}${crypto.randomUUID().replaceAll("-", "")}`;
}
