import { describe, expect, it } from 'vitest';
import { generateKey, isOrgName, keyPrefix, kindOfKey } from '../../src/foundations/auth/key-format.js';

describe('a generated key', () => {
  it('is its kind prefix followed by 32 base62 characters', () => {
    expect(generateKey('admin')).toMatch(/^svc_adm_[0-9A-Za-z]{32}$/);
    expect(generateKey('agent')).toMatch(/^svc_agt_[0-9A-Za-z]{32}$/);
    expect(generateKey('sdk')).toMatch(/^svc_sdk_[0-9A-Za-z]{32}$/);
  });

  it('is different every time', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateKey('sdk')));
    expect(keys.size).toBe(200);
  });

  it('discards random bytes at or above 248, so no base62 character is favoured', () => {
    // A source that returns 255 (to be discarded) then 0 (→ '0') shows discarded bytes are skipped.
    let call = 0;
    const random = (size: number) => Buffer.alloc(size, call++ % 2 === 0 ? 255 : 0);
    expect(generateKey('agent', random)).toBe(`svc_agt_${'0'.repeat(32)}`);
  });
});

describe('the prefix of a key', () => {
  it('is the kind prefix plus the first 8 characters for a generated key', () => {
    const key = generateKey('agent');
    expect(keyPrefix(key)).toBe(key.slice(0, 16));
  });

  it('shows at most half of a short secret, never all of it', () => {
    expect(keyPrefix('svc_adm_0123456789abcdef')).toBe('svc_adm_01234567');
    expect(keyPrefix('svc_adm_0123456789')).toBe('svc_adm_01234');
    expect(keyPrefix('svc_adm_ab')).toBe('svc_adm_a');
    expect(keyPrefix('svc_adm_a')).toBe('svc_adm_');
  });
});

describe('the kind of a key', () => {
  it('is read from its prefix', () => {
    expect(kindOfKey('svc_adm_x')).toBe('admin');
    expect(kindOfKey('svc_agt_x')).toBe('agent');
    expect(kindOfKey('svc_sdk_x')).toBe('sdk');
    expect(kindOfKey('svc_xyz_x')).toBeNull();
    expect(kindOfKey('')).toBeNull();
  });
});

describe('an organisation name', () => {
  it('is lowercase letters, digits, _ and -, starting with a letter or digit, up to 63 characters', () => {
    expect(isOrgName('acme')).toBe(true);
    expect(isOrgName('0-team_a')).toBe(true);
    expect(isOrgName('a'.repeat(63))).toBe(true);
    expect(isOrgName('a'.repeat(64))).toBe(false);
    expect(isOrgName('-acme')).toBe(false);
    expect(isOrgName('Acme')).toBe(false);
    expect(isOrgName('ac me')).toBe(false);
    expect(isOrgName('')).toBe(false);
  });
});
