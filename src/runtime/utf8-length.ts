/** UTF-8 bytes of one code point; a lone surrogate counts as U+FFFD, 3 bytes, as TextEncoder encodes it. */
export const utf8Width = (code: number) => (code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4);

/** UTF-8 bytes of a string, counted from its code points without encoding it (no allocation). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let at = 0; at < text.length; ) {
    const code = text.codePointAt(at)!;
    bytes += utf8Width(code);
    at += code > 0xffff ? 2 : 1;
  }
  return bytes;
}
