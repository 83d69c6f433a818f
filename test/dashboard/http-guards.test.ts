import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Context } from 'koa';
import { describe, expect, it } from 'vitest';
import {
  checkCsrf,
  clearedSessionCookies,
  csrfTokenOf,
  ownOrigin,
  readSessionToken,
  requireSameOrigin,
  sessionCookie,
} from '../../src/apps/dashboard/sessions/session-cookie.js';
import { ForbiddenError } from '../../src/foundations/errors/kinds.js';
import { clientAddress, trustProxies } from '../../src/foundations/http/client-address.js';

/**
 * A Koa context of an app trusting `proxies` reverse proxies (FLAGOPS_TRUST_PROXY), for a request with these
 * method, headers and socket.
 */
function request(
  method: string,
  headers: Record<string, string>,
  socket: { encrypted?: boolean; remoteAddress?: string } = {},
  proxies = 0,
): Context {
  const app = new Koa();
  trustProxies(app, proxies);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const req = { method, url: '/', headers: lower, socket: { remoteAddress: '127.0.0.1', ...socket } } as unknown as IncomingMessage;
  return app.createContext(req, {} as ServerResponse);
}

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
    expect(clearedSessionCookies(true)).toEqual([
      expect.stringMatching(/^flagops_session=; .*Max-Age=0/),
      expect.stringMatching(/^__Host-flagops_session=; .*Max-Age=0; Secure/),
    ]);
  });
});

describe('the request origin and the client address', () => {
  const forwarded = {
    host: '127.0.0.1:4000',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'flags.example.com',
    'x-forwarded-for': '203.0.113.9',
  };

  it('ignores X-Forwarded-* unless proxies are trusted', () => {
    const ctx = request('GET', forwarded);
    expect(ctx.secure).toBe(false);
    expect(ownOrigin(ctx)).toBe('http://127.0.0.1:4000');
    expect(ctx.ip).toBe('127.0.0.1');
    expect(clientAddress(ctx.req, 0)).toBe('127.0.0.1');
  });

  it('believes them behind one trusted proxy', () => {
    const ctx = request('GET', forwarded, {}, 1);
    expect(ctx.secure).toBe(true);
    expect(ownOrigin(ctx)).toBe('https://flags.example.com');
    expect(ctx.ip).toBe('203.0.113.9');
    expect(clientAddress(ctx.req, 1)).toBe('203.0.113.9');
  });

  it('is https on a TLS socket', () => {
    expect(ownOrigin(request('GET', { host: 'flags.example.com' }, { encrypted: true }))).toBe('https://flags.example.com');
  });

  it('takes the entry the trusted proxies added, never one the client put in front', () => {
    // The client sent "X-Forwarded-For: 198.51.100.66"; the proxy appended the address it saw.
    const one = request('GET', { host: 'x', 'x-forwarded-for': '198.51.100.66, 198.51.100.1' }, { remoteAddress: '10.0.0.2' }, 1);
    expect(one.ip).toBe('198.51.100.1');
    expect(clientAddress(one.req, 1)).toBe('198.51.100.1');
    // Two proxies (a load balancer, then nginx): the load balancer's entry is the client's.
    const two = request('GET', { host: 'x', 'x-forwarded-for': '198.51.100.66, 198.51.100.1, 10.0.0.1' }, { remoteAddress: '10.0.0.2' }, 2);
    expect(two.ip).toBe('198.51.100.1');
    expect(clientAddress(two.req, 2)).toBe('198.51.100.1');
    // Fewer entries than proxies: the first one, as Koa does.
    const short = request('GET', { host: 'x', 'x-forwarded-for': '198.51.100.1' }, { remoteAddress: '10.0.0.2' }, 2);
    expect(clientAddress(short.req, 2)).toBe(short.ip);
  });
});

describe('CSRF protection of cookie-authenticated changes', () => {
  const same = {
    host: '127.0.0.1:4000',
    origin: 'http://127.0.0.1:4000',
    'sec-fetch-site': 'same-origin',
    'x-csrf-token': csrfTokenOf(token),
  };

  it('lets a same-origin change with the CSRF token through', () => {
    expect(() => checkCsrf(request('POST', same), token)).not.toThrow();
  });

  it('lets reads through without a token (they change nothing)', () => {
    expect(() => checkCsrf(request('GET', { host: '127.0.0.1:4000', 'sec-fetch-site': 'cross-site' }), token)).not.toThrow();
  });

  it('refuses a change marked cross-site or same-site by the browser (another port of the same host is same-site)', () => {
    for (const site of ['cross-site', 'same-site', 'none']) {
      expect(() => checkCsrf(request('PUT', { ...same, 'sec-fetch-site': site }), token), site).toThrow(ForbiddenError);
    }
  });

  it('refuses a change from another Origin, even with the right token', () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:4001', 'https://127.0.0.1:4000', 'null']) {
      const headers: Record<string, string> = { ...same, origin };
      delete headers['sec-fetch-site'];
      expect(() => checkCsrf(request('POST', headers), token), origin).toThrow(/cross-origin request refused/);
    }
  });

  it("refuses a change without the token, or with another session's token", () => {
    const { 'x-csrf-token': _, ...noToken } = same;
    expect(() => checkCsrf(request('DELETE', noToken), token)).toThrow(/CSRF token/);
    expect(() => checkCsrf(request('DELETE', { ...same, 'x-csrf-token': csrfTokenOf('B'.repeat(43)) }), token)).toThrow(/CSRF token/);
  });

  it("checks the Origin against the proxy's public origin when proxies are trusted", () => {
    const headers = {
      host: '10.0.0.5:4000',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'flags.example.com',
      origin: 'https://flags.example.com',
    };
    expect(() => requireSameOrigin(request('POST', headers, {}, 1))).not.toThrow();
    expect(() => requireSameOrigin(request('POST', headers))).toThrow(ForbiddenError);
  });
});
