/**
 * Bucketing: MurmurHash3 x86 32-bit over the UTF-8 bytes of a JavaScript string, and the bucket it gives a
 * user. The bytes are produced on the fly from char codes, so hashing allocates nothing, and a hash can
 * resume from a saved state: the evaluator absorbs `"<flagKey>/"` once per snapshot and only hashes
 * the user id per call.
 */

// UTF-8, from UTF-16 code units as JavaScript stores strings.

/** U+FFFD, what the WHATWG encoder (TextEncoder, Buffer) writes for a lone surrogate. */
const REPLACEMENT = 0xfffd;

/**
 * The code point starting at index `i` of `s`, whose first code unit is `c`.
 * A valid surrogate pair yields one supplementary code point (the caller skips the low half,
 * which it can tell from the result being > 0xFFFF); a lone surrogate yields U+FFFD.
 */
function codePointAt(s: string, i: number, c: number): number {
  if (c < 0xd800 || c > 0xdfff) return c;
  if (c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  }
  return REPLACEMENT;
}

/** How many UTF-8 bytes encode code point `cp`. */
function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** The UTF-8 bytes of `cp` packed little-endian into one int: byte j is `(packed >>> 8j) & 0xff`. */
function utf8Packed(cp: number): number {
  if (cp < 0x80) return cp;
  if (cp < 0x800) return 0xc0 | (cp >> 6) | ((0x80 | (cp & 0x3f)) << 8);
  if (cp < 0x10000) {
    return 0xe0 | (cp >> 12) | ((0x80 | ((cp >> 6) & 0x3f)) << 8) | ((0x80 | (cp & 0x3f)) << 16);
  }
  return 0xf0 | (cp >> 18) | ((0x80 | ((cp >> 12) & 0x3f)) << 8) | ((0x80 | ((cp >> 6) & 0x3f)) << 16) | ((0x80 | (cp & 0x3f)) << 24);
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function scramble(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixBlock(h: number, k: number): number {
  h ^= scramble(k);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** The hash state between blocks: `h` after the full 4-byte blocks, `n` (0–3) pending bytes in `k`, `len` bytes seen. */
export interface Murmur3State {
  readonly h: number;
  readonly k: number;
  readonly n: number;
  readonly len: number;
}

/** Absorbs `s` starting from `seed` without finishing, for `murmur3Resume`. Runs once per flag, so clarity over speed. */
export function murmur3Absorb(s: string, seed = 0): Murmur3State {
  let h = seed | 0;
  let k = 0;
  let n = 0;
  let len = 0;
  for (let i = 0; i < s.length; i++) {
    const cp = codePointAt(s, i, s.charCodeAt(i));
    if (cp > 0xffff) i++;
    let bytes = utf8Packed(cp);
    for (let count = utf8Length(cp); count > 0; count--, len++, bytes >>>= 8) {
      k |= (bytes & 0xff) << (n << 3);
      if (++n === 4) {
        h = mixBlock(h, k);
        k = 0;
        n = 0;
      }
    }
  }
  return { h, k, n, len };
}

function finish(h: number, k: number, n: number, len: number): number {
  if (n !== 0) h ^= scramble(k);
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Finishes a hash: absorbs `s` after the state (h, k, n, len) and returns the unsigned 32-bit hash.
 * The state is passed as four numbers rather than an object so the hot path reads no memory for it.
 * Kept small so the JIT inlines it; the first non-ASCII char hands over to `resumeUtf8`.
 */
export function murmur3Resume(h: number, k: number, n: number, len: number, s: string): number {
  const end = s.length;
  let i = 0;
  // Whole words of four ASCII chars (four bytes), merged with the n pending bytes: the common case.
  const shift = n << 3;
  for (const last = end - 3; i < last; i += 4) {
    const c0 = s.charCodeAt(i);
    const c1 = s.charCodeAt(i + 1);
    const c2 = s.charCodeAt(i + 2);
    const c3 = s.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) >= 0x80) break;
    const w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24);
    h = mixBlock(h, k | (w << shift));
    k = shift === 0 ? 0 : w >>> (32 - shift);
  }
  len += i;
  for (; i < end; i++, len++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return resumeUtf8(h, k, n, len, s, i);
    k |= c << (n << 3);
    if (++n === 4) {
      h = mixBlock(h, k);
      k = 0;
      n = 0;
    }
  }
  return finish(h, k, n, len);
}

/** The rest of `s` from index `i`, one code point at a time, as UTF-8 bytes. */
function resumeUtf8(h: number, k: number, n: number, len: number, s: string, i: number): number {
  while (i < s.length) {
    const cp = codePointAt(s, i, s.charCodeAt(i));
    i += cp > 0xffff ? 2 : 1;
    let bytes = utf8Packed(cp);
    for (let count = utf8Length(cp); count > 0; count--, len++, bytes >>>= 8) {
      k |= (bytes & 0xff) << (n << 3);
      if (++n === 4) {
        h = mixBlock(h, k);
        k = 0;
        n = 0;
      }
    }
  }
  return finish(h, k, n, len);
}

/** MurmurHash3 x86 32-bit (unsigned) of the UTF-8 encoding of `s`; lone surrogates encode as U+FFFD like TextEncoder. */
export function murmur3_32(s: string, seed = 0): number {
  return murmur3Resume(seed | 0, 0, 0, 0, s);
}

/**
 * A user's bucket for a flag: (murmur3_32("<flagKey>/<userId>") mod 10000) / 100, in [0, 100) with two decimals.
 * Division by 100 (not multiplication by 0.01) is correctly rounded, so 1234 gives exactly the double that
 * JSON prints as 12.34.
 */
export function bucket(flagKey: string, userId: string): number {
  const s = murmur3Absorb(flagKey + '/');
  return resumeBucket(s.h, s.k, s.n, s.len, userId);
}

/** The bucket of `userId` after a `"<flagKey>/"` prefix absorbed once per snapshot into (h, k, n, len). */
export function resumeBucket(h: number, k: number, n: number, len: number, userId: string): number {
  return (murmur3Resume(h, k, n, len, userId) % 10000) / 100;
}
