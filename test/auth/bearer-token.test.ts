import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/foundations/auth/key-format.js';

describe('bearerToken', () => {
  it('reads the credential of a Bearer header, whatever the scheme case', () => {
    expect(bearerToken('Bearer svc_agt_abc')).toBe('svc_agt_abc');
    expect(bearerToken('bearer  svc_agt_abc ')).toBe('svc_agt_abc');
  });

  it('finds none in a missing, empty or other-scheme header', () => {
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken('Bearer ')).toBeNull();
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeNull();
    expect(bearerToken('Bearer two tokens')).toBeNull();
  });
});
