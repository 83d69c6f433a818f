import { bucket, murmur3_32 } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { referenceBucket, referenceMurmur, seeded } from './support.js';

function randomString(random: () => number, maxLength: number): string {
  let s = '';
  const length = Math.floor(random() * maxLength);
  for (let i = 0; i < length; i++) {
    const r = random();
    if (r < 0.5) s += String.fromCharCode(0x20 + Math.floor(random() * 0x5f));
    else if (r < 0.65)
      s += String.fromCharCode(0x80 + Math.floor(random() * 0x780)); // 2-byte UTF-8
    else if (r < 0.85)
      s += String.fromCharCode(0x800 + Math.floor(random() * 0xf7ff)); // 3-byte, lone surrogates too
    else s += String.fromCodePoint(0x10000 + Math.floor(random() * 0xfffff)); // surrogate pair, 4-byte
  }
  return s;
}

describe('murmur3_32 (MurmurHash3 x86 32-bit of the UTF-8 string)', () => {
  it('matches murmurhash-js for ASCII strings of every length up to 40 (every tail size and alignment)', () => {
    const text = 'The quick brown fox jumps over the lazy dog';
    for (let n = 0; n <= 40; n++) expect(murmur3_32(text.slice(0, n)), `length ${n}`).toBe(referenceMurmur(text.slice(0, n)));
  });

  it('matches published values', () => {
    expect(murmur3_32('')).toBe(0);
    expect(murmur3_32('', 1)).toBe(0x514e28b7);
    expect(murmur3_32('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723);
  });

  it('honours the seed', () => {
    for (const seed of [1, 42, 0x9747b28c, 0xffffffff])
      expect(murmur3_32('checkout/user-1', seed)).toBe(referenceMurmur('checkout/user-1', seed));
  });

  it.each([
    ['é (2 bytes)', 'café'],
    ['日本 (3 bytes each)', '日本'],
    ['emoji (surrogate pair, 4 bytes)', '🚀'],
    ['emoji ZWJ sequence', '👩‍💻'],
    ['mathematical script capital X', 'a𝒳b'],
    ['combining accent', 'e\u0301'],
    ['mixed scripts', 'user-日本-é-🎉-ключ'],
  ])('hashes the UTF-8 bytes of %s', (_, s) => {
    expect(murmur3_32(s)).toBe(referenceMurmur(s));
  });

  it('hashes a lone surrogate as U+FFFD, as TextEncoder encodes it', () => {
    for (const s of ['\ud800', 'a\udc00b', 'x\ud83d', '\udfff\ud800z']) expect(murmur3_32(s)).toBe(referenceMurmur(s));
    expect(murmur3_32('\ud800')).toBe(murmur3_32('\ufffd'));
  });

  it('matches murmurhash-js on 5,000 random strings mixing 1- to 4-byte characters', () => {
    const random = seeded(7);
    for (let i = 0; i < 5000; i++) {
      const s = randomString(random, 30);
      expect(murmur3_32(s), JSON.stringify(s)).toBe(referenceMurmur(s));
    }
  });
});

describe('bucket ((murmur3("<flagKey>/<userId>") mod 10000) / 100)', () => {
  it('equals the reference bucket for ASCII and non-ASCII flag keys and user ids', () => {
    const pairs = [
      ['checkout-v2', 'user-1'],
      ['café-banner', 'josé'],
      ['日本-launch', 'ユーザー42'],
      ['emoji-🚀', '👩‍💻'],
      ['k', ''],
    ];
    for (const [flagKey, userId] of pairs) expect(bucket(flagKey, userId)).toBe(referenceBucket(flagKey, userId));
  });

  it('equals the reference bucket for 2,000 random key/user pairs', () => {
    const random = seeded(11);
    for (let i = 0; i < 2000; i++) {
      const flagKey = randomString(random, 12);
      const userId = randomString(random, 24);
      expect(bucket(flagKey, userId)).toBe(referenceBucket(flagKey, userId));
    }
  });

  it('is a number in [0, 100) that JSON prints with at most two decimals', () => {
    for (let i = 0; i < 20000; i++) {
      const b = bucket('rollout', `u${i}`);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(100);
      expect(JSON.stringify(b)).toMatch(/^\d{1,2}(\.\d{1,2})?$/);
    }
  });

  it('turns hash mod 10000 = 1234 into exactly 12.34', () => {
    let userId = '';
    for (let i = 0; userId === ''; i++) if (referenceMurmur(`f/u${i}`) % 10000 === 1234) userId = `u${i}`;
    expect(bucket('f', userId)).toBe(12.34);
    expect(JSON.stringify({ bucket: bucket('f', userId) })).toBe('{"bucket":12.34}');
  });
});
