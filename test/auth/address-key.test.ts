import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/foundations/auth/auth-guard.js';

describe('the throttle key of a client address', () => {
  it('is an IPv4 address as it is, also when written IPv4-mapped', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('is the /64 of an IPv6 address, however it is written, so a host cannot hop within its block', () => {
    const key = '2001:db8:85a3:1::/64';
    expect(addressKey('2001:db8:85a3:1:0:0:0:1')).toBe(key);
    expect(addressKey('2001:0db8:85a3:0001:ffff:1:2:3')).toBe(key);
    expect(addressKey('2001:DB8:85A3:1::42')).toBe(key);
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });
});
