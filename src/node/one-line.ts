/**
 * One event, one line: log collectors (Fluent Bit, Vector) split on newlines, and a provider's
 * text or a stack quoted in a line would become lines of their own, without the request id.
 */
export function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, "\\n");
}
