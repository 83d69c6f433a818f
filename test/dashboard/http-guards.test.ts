import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { checkCsrf, requireSameOrigin } from '../../src/dashboard/http/csrf.js';
import { clientAddress, isSecureRequest, ownOrigin } from '../../src/dashboard/http/request-origin.js';
import { clearedSessionCookies, readSessionToken, sessionCookie } from '../../src/dashboard/http/session-cookie.js';
import { csrfTokenOf } from '../../src/dashboard/sessions/session-token.js';
import { ForbiddenError } from '../../src/errors/kinds.js';

/** What the guards read of a Koa context: method, headers and the socket. */
function request(method: string, headers: Record<string, string>, socket: { encrypted?: boolean; remoteAddress?: string } = {}): Context {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, get: (name: string) => lower[name.toLowerCase()] ?? '', req: { socket: { remoteAddress: '127.0.0.1', ...socket } } } as unknown as Context;
}

const direct = { trustProxy: false };
const proxied = { trustProxy: true };
const token = 'A'.repeat(43);

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict, Path=/, with the session lifetime as Max-Age; not Secure over http', () => {
    const cookie = sessionCookie(token, { secure: false, maxAgeSeconds: 43200 });
    expect(cookie.split('; ')).toEqual([`flagops_session=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=43200']);
  });

  it('over https is Secure and named __Host-, which browsers bind to this exact host', () => {
    const cookie = sessionCookie(token, { secure: true, maxAgeSeconds: 60 });
    expect(cookie).toMatch(/^__Host-flagops_session=A{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=60; Secure$/);
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it('is read from a Cookie header among others, the __Host- one first', () => {
    expect(readSessionToken(`a=1; flagops_session=${token}; b=2`)).toBe(token);
    expect(readSessionToken(`flagops_session=plain; __Host-flagops_session=secure`)).toBe('secure');
    expect(readSessionToken('other=1')).toBeNull();
    expect(readSessionToken('flagops_session=')).toBeNull();
  });

  it('is cleared under both names on https, with Max-Age=0', () => {
    expect(clearedSessionCookies(true)).toEqual([expect.stringMatching(/^flagops_session=; .*Max-Age=0/), expect.stringMatching(/^__Host-flagops_session=; .*Max-Age=0; Secure/)]);
  });
});

describe('the request origin', () => {
  it('ignores X-Forwarded-* unless proxies are trusted', () => {
    const ctx = request('GET', { host: '127.0.0.1:4000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flags.example.com', 'x-forwarded-for': '203.0.113.9' });
    expect(isSecureRequest(ctx, direct)).toBe(false);
    expect(ownOrigin(ctx, direct)).toBe('http://127.0.0.1:4000');
    expect(clientAddress(ctx, direct)).toBe('127.0.0.1');
    expect(isSecureRequest(ctx, proxied)).toBe(true);
    expect(ownOrigin(ctx, proxied)).toBe('https://flags.example.com');
    expect(clientAddress(ctx, proxied)).toBe('203.0.113.9');
  });

  it('is https on a TLS socket', () => {
    expect(ownOrigin(request('GET', { host: 'flags.example.com' }, { encrypted: true }), direct)).toBe('https://flags.example.com');
  });

  it('takes the first of several forwarded values (the client side of the proxy chain)', () => {
    const ctx = request('GET', { host: 'x', 'x-forwarded-proto': 'https, http', 'x-forwarded-for': '198.51.100.1, 10.0.0.2' });
    expect(isSecureRequest(ctx, proxied)).toBe(true);
    expect(clientAddress(ctx, proxied)).toBe('198.51.100.1');
  });
});

describe('CSRF protection of cookie-authenticated changes', () => {
  const same = { host: '127.0.0.1:4000', origin: 'http://127.0.0.1:4000', 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrfTokenOf(token) };

  it('lets a same-origin change with the CSRF token through', () => {
    expect(() => checkCsrf(request('POST', same), token, direct)).not.toThrow();
  });

  it('lets reads through without a token (they change nothing)', () => {
    expect(() => checkCsrf(request('GET', { host: '127.0.0.1:4000', 'sec-fetch-site': 'cross-site' }), token, direct)).not.toThrow();
  });

  it('refuses a change marked cross-site or same-site by the browser (another port of the same host is same-site)', () => {
    for (const site of ['cross-site', 'same-site', 'none']) {
      expect(() => checkCsrf(request('PUT', { ...same, 'sec-fetch-site': site }), token, direct), site).toThrow(ForbiddenError);
    }
  });

  it('refuses a change from another Origin, even with the right token', () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:4001', 'https://127.0.0.1:4000', 'null']) {
      const headers: Record<string, string> = { ...same, origin };
      delete headers['sec-fetch-site'];
      expect(() => checkCsrf(request('POST', headers), token, direct), origin).toThrow(/cross-origin request refused/);
    }
  });

  it('refuses a change without the token, or with another session\'s token', () => {
    const { 'x-csrf-token': _, ...noToken } = same;
    expect(() => checkCsrf(request('DELETE', noToken), token, direct)).toThrow(/CSRF token/);
    expect(() => checkCsrf(request('DELETE', { ...same, 'x-csrf-token': csrfTokenOf('B'.repeat(43)) }), token, direct)).toThrow(/CSRF token/);
  });

  it('checks the Origin against the proxy\'s public origin when proxies are trusted', () => {
    const headers = { host: '10.0.0.5:4000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flags.example.com', origin: 'https://flags.example.com' };
    expect(() => requireSameOrigin(request('POST', headers), proxied)).not.toThrow();
    expect(() => requireSameOrigin(request('POST', headers), direct)).toThrow(ForbiddenError);
  });
});
