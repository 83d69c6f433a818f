import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOidcSettings } from '../../src/foundations/config/oidc-settings.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { CookieJar, jarFetch, signInAtProvider, startTestProvider, type TestProvider } from '../helpers/oidc-provider.mjs';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

const ROLES = 'flag-admins=admin;shop-devs=editor@shop;web-devs=editor@web;support=viewer';

const PEOPLE = [
  { id: 'u-alice', login: 'alice', password: 'alice-at-provider', email: 'alice@example.com', groups: ['flag-admins', 'staff'] },
  { id: 'u-sam', login: 'sam', password: 'sam-at-provider', preferredUsername: 'sam', groups: ['web-devs', 'shop-devs'] },
  { id: 'u-val', login: 'val', password: 'val-at-provider', email: 'val@example.com', groups: ['support', 'shop-devs'] },
  { id: 'u-uma', login: 'uma', password: 'uma-at-provider', email: 'uma@example.com', groups: ['marketing'] },
];

/** OpenID Connect sign-in against a real provider (oidc-provider on a loopback port), driven over HTTP. */
describe('single sign-on with OpenID Connect', () => {
  let provider: TestProvider;
  let svc: TestService;
  const logLines: Json[] = [];
  /** Each test signs in from its own address (X-Forwarded-For behind one trusted proxy), so their failures never add up. */
  let nextAddress = 1;
  const address = () => `198.51.100.${nextAddress++}`;

  /** Visits the callback as the browser that started the sign-in (its jar), from `from`. */
  const callback = (jar: CookieJar, url: string, from: string) => jarFetch(jar, url, { headers: { 'x-forwarded-for': from } });

  async function sessionOf(jar: CookieJar) {
    const res = await jarFetch(jar, `${svc.controlUrl}/dashboard/api/session`);
    return { status: res.status, body: (await res.json()) as Json };
  }

  async function storedSessions(): Promise<Json[]> {
    return JSON.parse(await readFile(path.join(svc.dataDir, 'state', 'sessions.json'), 'utf8')).sessions;
  }

  beforeAll(async () => {
    provider = await startTestProvider({ people: PEOPLE });
    const oidc = parseOidcSettings({
      FLAGOPS_OIDC_ISSUER: provider.issuer,
      FLAGOPS_OIDC_CLIENT_ID: provider.clientId,
      FLAGOPS_OIDC_CLIENT_SECRET: provider.clientSecret,
      FLAGOPS_OIDC_ROLES: ROLES,
    });
    svc = await startTestService({
      oidc,
      trustProxy: 1,
      metrics: { enabled: true, token: 'metrics-token-for-sso-test' },
      logger: createLogger({ level: 'info', write: (line) => void logLines.push(JSON.parse(line)) }),
    });
    await provider.registerRedirectUri(`${svc.controlUrl}/auth/oidc/callback`);
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await provider?.stop();
  });

  it('offers single sign-on beside the password form', async () => {
    const res = await fetch(`${svc.controlUrl}/dashboard/api/sign-in-options`);
    expect(await res.json()).toEqual({
      password: true,
      sso: { label: new URL(provider.issuer).host, loginUrl: '/auth/oidc/login', available: true },
    });
  });

  it('starts the authorization code flow with PKCE, state and nonce, and the callback on its own origin', async () => {
    const jar = new CookieJar();
    const res = await jarFetch(jar, `${svc.controlUrl}/auth/oidc/login`);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location') as string);
    expect(`${to.origin}${to.pathname}`).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      client_id: provider.clientId,
      response_type: 'code',
      redirect_uri: `${svc.controlUrl}/auth/oidc/callback`,
      code_challenge_method: 'S256',
      scope: 'openid email profile groups',
    });
    for (const param of ['state', 'nonce', 'code_challenge']) expect(to.searchParams.get(param)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The flow cookie is sealed: neither the state nor the PKCE verifier can be read from it.
    expect(res.headers.get('set-cookie')).toMatch(/^flagops_oidc=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
    expect(jar.get(svc.controlUrl, 'flagops_oidc')).not.toContain(to.searchParams.get('state'));
  });

  it('behind a trusted proxy, takes the redirect URI from the origin the browser sees, and seals the flow in a __Host- cookie', async () => {
    const res = await fetch(`${svc.controlUrl}/auth/oidc/login`, {
      redirect: 'manual',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flags.example.com', 'x-forwarded-for': address() },
    });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location') as string).searchParams.get('redirect_uri')).toBe(
      'https://flags.example.com/auth/oidc/callback',
    );
    expect(res.headers.get('set-cookie')).toMatch(
      /^__Host-flagops_oidc=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/,
    );
  });

  it('signs a person in: provider login, redirect back, a session cookie with the mapped role and the email', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    const res = await callback(jar, callbackUrl, address());
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('flagops_session='))).toMatch(/HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(jar.get(svc.controlUrl, 'flagops_oidc')).toBeUndefined(); // single use: the flow cookie is cleared

    const me = await sessionOf(jar);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      user: { username: 'alice@example.com', name: 'alice@example.com', org: 'acme' },
      signedInWith: 'oidc',
    });
    const stored = (await storedSessions()).find((s) => s.userId === 'oidc:u-alice');
    expect(stored).toMatchObject({ org: 'acme', role: 'admin', email: 'alice@example.com' });
    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: 'signed in with openid connect', user: 'alice@example.com', role: 'admin' }),
    );

    // The session works on the API, and the audit trail names the person by email.
    const csrf = me.body.csrfToken as string;
    const send = (method: string, url: string, body: unknown) =>
      jarFetch(jar, `${svc.controlUrl}${url}`, {
        method,
        headers: { 'content-type': 'application/json', origin: svc.controlUrl, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf },
        body: JSON.stringify(body),
      });
    const project = await (await send('POST', '/api/v1/projects', { name: 'Shop', slug: 'shop' })).json();
    const flag = await send('POST', `/api/v1/projects/${project.id}/flags`, { key: 'checkout' });
    expect(flag.status).toBe(201);
    const audit = await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/audit?projectId=${project.id}`);
    expect(audit.body.entries[0].actor).toEqual({ type: 'session', name: 'alice@example.com', role: 'admin' });
  });

  it('the role the groups map to is what the session may do: an editor limited to shop creates no project', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'val', 'val-at-provider');
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
    const me = await sessionOf(jar);
    expect(me.body.role).toBe('editor@shop');
    const created = await jarFetch(jar, `${svc.controlUrl}/api/v1/projects`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: svc.controlUrl,
        'sec-fetch-site': 'same-origin',
        'x-csrf-token': me.body.csrfToken as string,
      },
      body: JSON.stringify({ name: 'Elsewhere', slug: 'elsewhere' }),
    });
    expect(created.status).toBe(403);
  });

  it('names a person without an email by preferred_username, and adds up the projects of groups of one level', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'sam', 'sam-at-provider');
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
    expect((await sessionOf(jar)).body).toMatchObject({ user: { name: 'sam' } });
    expect((await storedSessions()).find((s) => s.userId === 'oidc:u-sam')).toMatchObject({ role: 'editor@shop,web', username: 'sam' });
  });

  it('names a person by subject when the provider says the email is not verified, as a boolean or as a string', async () => {
    for (const unverified of [false, 'false', 'FALSE']) {
      const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
      provider.tamperIdToken((t) => provider.resign(t, { email_verified: unverified }));
      const res = await callback(jar, callbackUrl, address());
      provider.tamperIdToken(null);
      expect(res.status).toBe(303);
      expect((await sessionOf(jar)).body.user).toMatchObject({ username: 'u-alice' });
    }
  });

  it('gives a person in several mapped groups the highest role', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'val', 'val-at-provider');
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
    expect((await storedSessions()).find((s) => s.userId === 'oidc:u-val')).toMatchObject({ role: 'editor@shop' });
  });

  it('refuses a person none of whose groups is mapped, with a page that says so, and no session', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'uma', 'uma-at-provider');
    const res = await callback(jar, callbackUrl, address());
    expect(res.status).toBe(403);
    const page = await res.text();
    expect(page).toContain('You signed in as uma@example.com, but none of your groups has a role in flagops (your groups: marketing).');
    expect(res.headers.getSetCookie().some((c) => c.startsWith('flagops_session='))).toBe(false);
    expect((await sessionOf(jar)).status).toBe(401);
    expect((await storedSessions()).some((s) => s.userId === 'oidc:u-uma')).toBe(false);
  });

  it('refuses a replayed callback (its state was used) and one whose state is unknown to the browser', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    const flowCookie = jar.get(svc.controlUrl, 'flagops_oidc') as string;
    const from = address();
    expect((await callback(jar, callbackUrl, from)).status).toBe(303);

    // The same answer again, with a copy of the flow cookie: refused before the code is even tried.
    const replay = await fetch(callbackUrl, {
      redirect: 'manual',
      headers: { cookie: `flagops_oidc=${flowCookie}`, 'x-forwarded-for': address() },
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('This sign-in was already used, or took more than 10 minutes.');
    expect(replay.headers.getSetCookie().some((c) => c.startsWith('flagops_session='))).toBe(false);

    // A fresh sign-in's answer carried into another browser (no flow cookie), or with its state changed.
    const other = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    const noCookie = await fetch(other.callbackUrl, { redirect: 'manual', headers: { 'x-forwarded-for': address() } });
    expect(noCookie.status).toBe(400);
    expect(await noCookie.text()).toContain('does not belong to a sign-in started in this browser');
    const forged = new URL(other.callbackUrl);
    forged.searchParams.set('state', 'x'.repeat(43));
    expect((await callback(other.jar, forged.href, address())).status).toBe(400);
    expect(logLines).toContainEqual(
      expect.objectContaining({
        msg: 'authentication failed',
        credential: 'openid connect',
        reason: 'the state was already used (a replayed callback)',
      }),
    );
  });

  it('leaves the sign-in in progress alone when an answer that is not its own is refused (stale, forged)', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    const forged = await callback(jar, `${svc.controlUrl}/auth/oidc/callback?code=forged&state=forged`, address());
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('does not belong to a sign-in started in this browser');
    expect(forged.headers.getSetCookie()).toEqual([]);
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
    expect((await sessionOf(jar)).status).toBe(200);
  });

  describe('ID tokens that fail verification (the provider answers the code with a changed token)', () => {
    afterAll(() => provider.tamperIdToken(null));

    const cases: Array<[string, RegExp, (idToken: string) => string | Promise<string>]> = [
      [
        'a tampered token (claims changed, signature kept)',
        /signature verification failed/,
        (t) => {
          const [header, payload, signature] = t.split('.');
          const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
          const changed = Buffer.from(JSON.stringify({ ...claims, groups: ['flag-admins'], email: 'mallory@example.com' })).toString(
            'base64url',
          );
          return `${header}.${changed}.${signature}`;
        },
      ],
      [
        'a token signed with a key not in the issuer\u2019s JWKS',
        /signature verification failed/,
        (t) => provider.resign(t, {}, { otherKey: true }),
      ],
      ['a token for another audience', /"aud"/, (t) => provider.resign(t, { aud: 'some-other-client' })],
      [
        'an expired token',
        /"exp"/,
        (t) => provider.resign(t, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }),
      ],
      [
        'a token issued in the future (beyond a minute of clock skew)',
        /"iat" .* is in the future/,
        (t) => provider.resign(t, { iat: Math.floor(Date.now() / 1000) + 7200, exp: Math.floor(Date.now() / 1000) + 9000 }),
      ],
      [
        'a token issued long before the sign-in started',
        /"iat" .* is before the sign-in started/,
        (t) => provider.resign(t, { iat: Math.floor(Date.now() / 1000) - 365 * 86400 }),
      ],
      ['a token of another issuer', /"iss"/, (t) => provider.resign(t, { iss: 'http://127.0.0.1:1' })],
      ['a token with another nonce', /"nonce"/, (t) => provider.resign(t, { nonce: 'not-the-nonce-of-this-sign-in' })],
    ];

    for (const [name, reason, tamper] of cases) {
      it(`refuses ${name}: no session, and logs why`, async () => {
        const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
        provider.tamperIdToken(tamper);
        const logged = logLines.length;
        const res = await callback(jar, callbackUrl, address());
        provider.tamperIdToken(null);
        expect(res.status).toBe(401);
        expect(await res.text()).toContain('could not be verified, so nobody was signed in');
        expect(res.headers.getSetCookie().some((c) => c.startsWith('flagops_session='))).toBe(false);
        expect((await sessionOf(jar)).status).toBe(401);
        const failure = logLines.slice(logged).find((l) => l.msg === 'authentication failed');
        expect(failure).toMatchObject({ credential: 'openid connect', via: 'dashboard sign-in', reason: expect.stringMatching(reason) });
      });
    }
  });

  it('throttles failed sign-ins from one address like wrong passwords: after 3, a wait (429)', async () => {
    const from = address();
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'uma', 'uma-at-provider');
      codes.push((await callback(jar, callbackUrl, from)).status);
    }
    expect(codes).toEqual([403, 403, 403, 429]);
    // The wait is for this address only.
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
  });

  it('signs out: the session ends, and the answer links to the provider\u2019s own sign-out', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'alice', 'alice-at-provider');
    await callback(jar, callbackUrl, address());
    const csrf = (await sessionOf(jar)).body.csrfToken as string;
    const res = await jarFetch(jar, `${svc.controlUrl}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { origin: svc.controlUrl, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf },
    });
    const body = (await res.json()) as Json;
    expect(body.signedOut).toBe(true);
    const providerSignOut = new URL(body.providerSignOutUrl as string);
    expect(`${providerSignOut.origin}${providerSignOut.pathname}`).toBe(`${provider.issuer}/session/end`);
    expect(providerSignOut.searchParams.get('client_id')).toBe(provider.clientId);
    expect((await sessionOf(jar)).status).toBe(401);
  });

  it('reports single sign-on as ready in /healthz', async () => {
    const res = await fetch(`${svc.controlUrl}/healthz`, { headers: { authorization: 'Bearer metrics-token-for-sso-test' } });
    expect(((await res.json()) as Json).sso).toEqual({ issuer: `${provider.issuer}/`, state: 'ready' });
  });

  it('keeps a single sign-on session across a restart, role and email included, and refuses its answer replayed after it as used (the last test: the ports change)', async () => {
    const { callbackUrl, jar } = await signInAtProvider(svc.controlUrl, 'sam', 'sam-at-provider');
    const flowCookie = jar.get(svc.controlUrl, 'flagops_oidc') as string;
    expect((await callback(jar, callbackUrl, address())).status).toBe(303);
    const cookie = `flagops_session=${jar.get(svc.controlUrl, 'flagops_session')}`;
    await svc.restart();
    const me = await fetch(`${svc.controlUrl}/dashboard/api/session`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: { name: 'sam' }, signedInWith: 'oidc' });

    // The restarted service never saw that state used, but the provider's code is single use.
    const answer = new URL(callbackUrl);
    const replay = await fetch(`${svc.controlUrl}${answer.pathname}${answer.search}`, {
      redirect: 'manual',
      headers: { cookie: `flagops_oidc=${flowCookie}`, 'x-forwarded-for': address() },
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('This sign-in was already used, or took more than 10 minutes.');
    expect(replay.headers.getSetCookie().some((c) => c.startsWith('flagops_session='))).toBe(false);
  });
});
