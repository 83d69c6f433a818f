/**
 * UTF-8 helpers shared by the hashing code, so the encoding rules live in one place.
 * They work on UTF-16 code units as JavaScript stores strings; nothing here allocates.
 */

/** U+FFFD, what the WHATWG encoder (TextEncoder, Buffer) writes for a lone surrogate. */
const REPLACEMENT = 0xfffd;

/**
 * The code point starting at index `i` of `s`, whose first code unit is `c`.
 * A valid surrogate pair yields one supplementary code point (the caller skips the low half,
 * which it can tell from the result being > 0xFFFF); a lone surrogate yields U+FFFD.
 */
export function codePointAt(s: string, i: number, c: number): number {
  if (c < 0xd800 || c > 0xdfff) return c;
  if (c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  }
  return REPLACEMENT;
}

/** How many UTF-8 bytes encode code point `cp`. */
export function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** The UTF-8 bytes of `cp` packed little-endian into one int: byte j is `(packed >>> 8j) & 0xff`. */
export function utf8Packed(cp: number): number {
  if (cp < 0x80) return cp;
  if (cp < 0x800) return (0xc0 | (cp >> 6)) | ((0x80 | (cp & 0x3f)) << 8);
  if (cp < 0x10000) {
    return (0xe0 | (cp >> 12)) | ((0x80 | ((cp >> 6) & 0x3f)) << 8) | ((0x80 | (cp & 0x3f)) << 16);
  }
  return (
    (0xf0 | (cp >> 18)) |
    ((0x80 | ((cp >> 12) & 0x3f)) << 8) |
    ((0x80 | ((cp >> 6) & 0x3f)) << 16) |
    ((0x80 | (cp & 0x3f)) << 24)
  );
}
