import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { addUser, type SignedIn, sessionHeaders, signIn } from './helpers/dashboard-session.js';

describe('dashboard sessions over HTTP (a session may do what an admin key may, except key management)', () => {
  let svc: TestService;
  let alice: SignedIn;
  let projectId: string;
  let flagId: string;

  const withSession = (method: string, path: string, session: SignedIn, body?: unknown, extra: Record<string, string> = {}) =>
    fetch(`${svc.controlUrl}${path}`, {
      method,
      headers: { ...sessionHeaders(svc.controlUrl, session, extra), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => null)) as Json, headers: res.headers }));

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    await addUser(svc, 'alice', 'Alice Martin');
    alice = await signIn(svc.controlUrl, 'alice');
    const admin = httpClient(svc.controlUrl, svc.admin);
    projectId = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    flagId = (await admin.post(`/api/v1/projects/${projectId}/flags`, { key: 'checkout' })).body.id;
  });
  afterAll(() => svc?.stop());

  describe('signing in', () => {
    it('sets an HttpOnly, SameSite=Strict session cookie (not Secure over plain http) and answers the CSRF token', async () => {
      expect(alice.setCookie).toMatch(/^flagops_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
      const me = await withSession('GET', '/dashboard/api/session', alice);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({
        user: { username: 'alice', name: 'Alice Martin', org: 'acme' },
        csrfToken: alice.csrfToken,
        idleTimeoutSeconds: 7200,
      });
      expect(me.headers.get('cache-control')).toBe('no-store');
    });

    it('ignores X-Forwarded-Proto by default (FLAGOPS_TRUST_PROXY unset): no Secure flag', async () => {
      const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ username: 'alice', password: 'alice-password-1' }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).not.toMatch(/Secure|__Host-/);
    });

    it('refuses a wrong password or an unknown user with the same 401, and sets no cookie', async () => {
      for (const [username, password] of [
        ['alice', 'not-her-password'],
        ['mallory', 'whatever-password'],
      ]) {
        const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password }),
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'unknown username or wrong password' } });
        expect(res.headers.get('set-cookie')).toBeNull();
      }
    });

    it('refuses a sign-in posted by a page of another origin (login CSRF)', async () => {
      const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
        body: JSON.stringify({ username: 'alice', password: 'alice-password-1' }),
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
    });

    it('refuses a form post (not JSON) with 415', async () => {
      const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'username=alice&password=alice-password-1',
      });
      expect(res.status).toBe(415);
    });

    it('slows down guessing: after three failures the next attempt waits (429 with Retry-After), even with the right password', async () => {
      await addUser(svc, 'carol', 'Carol');
      const attempt = (password: string) =>
        fetch(`${svc.controlUrl}/dashboard/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'carol', password }),
        });
      for (let i = 0; i < 3; i++) expect((await attempt('wrong-password-x')).status).toBe(401);
      const blocked = await attempt('carol-password-1');
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toBe('1');
      expect((await blocked.json()).error.code).toBe('rate_limited');
      await new Promise((r) => setTimeout(r, 1100));
      expect((await attempt('carol-password-1')).status).toBe(200);
    });
  });

  describe('acting with the session', () => {
    it('reads and changes the control plane like an admin key', async () => {
      expect((await withSession('GET', '/api/v1/projects', alice)).body.projects.map((p: Json) => p.slug)).toEqual(['shop']);
      const put = await withSession('PUT', `/api/v1/flags/${flagId}/environments/prod/config`, alice, {
        enabled: true,
        rolloutPct: 10,
        expectedVersion: 1,
      });
      expect(put.status).toBe(200);
      expect(put.body.environments.prod).toMatchObject({ enabled: true, rolloutPct: 10, version: 2 });
      // promote into prod is a deploy: an agent key may not, a session may
      expect((await withSession('POST', `/api/v1/flags/${flagId}/environments/prod/promote`, alice, { fromEnv: 'staging' })).status).toBe(
        200,
      );
    });

    it('is attributed to the person in the audit trail (actor.type session) and in kills', async () => {
      const kill = await withSession('POST', `/api/v1/flags/${flagId}/environments/staging/kill`, alice, { reason: 'dashboard test' });
      expect(kill.status).toBe(200);
      expect(kill.body.environments.staging).toMatchObject({ killed: true, killedBy: 'Alice Martin' });
      const audit = await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/audit?flagId=${flagId}&action=kill`);
      expect(audit.body.entries[0]).toMatchObject({
        action: 'kill',
        environment: 'staging',
        actor: { type: 'session', name: 'Alice Martin' },
      });
      expect(audit.body.entries[0].actor).not.toHaveProperty('keyPrefix');
    });

    it('may not manage keys or users (403), which are for admin keys', async () => {
      for (const [method, path, body] of [
        ['GET', '/api/v1/keys'],
        ['POST', '/api/v1/keys', { kind: 'agent' }],
        ['GET', '/api/v1/users'],
        ['POST', '/api/v1/users', { username: 'x', name: 'X', password: 'x-password-12' }],
      ] as const) {
        const res = await withSession(method, path, alice, body);
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
    });

    it('never reaches another organisation', async () => {
      const other = httpClient(svc.controlUrl, svc.orgs.globex.admin);
      const theirs = (await other.post('/api/v1/projects', { name: 'G', slug: 'g' })).body.id;
      expect((await withSession('GET', `/api/v1/projects/${theirs}/flags`, alice)).status).toBe(404);
    });
  });

  describe('cross-site request forgery', () => {
    const killPath = () => `/api/v1/flags/${flagId}/environments/dev/kill`;
    const devKilled = async () => (await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/flags/${flagId}`)).body.environments.dev.killed;
    const kills = async () =>
      (await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/audit?flagId=${flagId}&environment=dev&action=kill`)).body.entries.length;

    it('refuses a write carrying the cookie from another Origin (403) and changes nothing', async () => {
      const before = await kills();
      const res = await fetch(`${svc.controlUrl}${killPath()}`, {
        method: 'POST',
        headers: { cookie: alice.cookie, origin: 'http://evil.example' },
      });
      expect(res.status).toBe(403);
      expect((await res.json()).error).toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining('cross-origin request refused'),
      });
      expect(await devKilled()).toBe(false);
      expect(await kills()).toBe(before);
    });

    it('refuses a write marked same-site by the browser (another port of this host gets the SameSite cookie)', async () => {
      const res = await withSession('POST', killPath(), alice, undefined, { 'sec-fetch-site': 'same-site', origin: 'http://127.0.0.1:1' });
      expect(res.status).toBe(403);
      expect(await devKilled()).toBe(false);
    });

    it('refuses a write without the CSRF token even when Origin is absent (an old browser or a bare client)', async () => {
      const res = await fetch(`${svc.controlUrl}${killPath()}`, { method: 'POST', headers: { cookie: alice.cookie } });
      expect(res.status).toBe(403);
      expect((await res.json()).error.message).toMatch(/x-csrf-token/);
      expect(await devKilled()).toBe(false);
    });

    it('checks before reading the body: a refused config update writes nothing', async () => {
      const before = (await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/flags/${flagId}`)).body.environments.dev.version;
      const res = await fetch(`${svc.controlUrl}/api/v1/flags/${flagId}/environments/dev/config`, {
        method: 'PUT',
        headers: { cookie: alice.cookie, origin: 'http://evil.example', 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: true }),
      });
      expect(res.status).toBe(403);
      expect((await httpClient(svc.controlUrl, svc.admin).get(`/api/v1/flags/${flagId}`)).body.environments.dev.version).toBe(before);
    });

    it('lets reads through from anywhere the cookie is sent (they change nothing, and no CORS lets another origin read them)', async () => {
      const res = await fetch(`${svc.controlUrl}/api/v1/projects`, { headers: { cookie: alice.cookie, origin: 'http://evil.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('signing out and ending sessions', () => {
    it('sign-out needs the CSRF token, then revokes the session at once', async () => {
      const bob = await signIn(svc.controlUrl, (await addUser(svc, 'bob', 'Bob Stone')).username);
      const forged = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
        method: 'DELETE',
        headers: { cookie: bob.cookie, origin: 'http://evil.example' },
      });
      expect(forged.status).toBe(403);
      expect((await withSession('GET', '/api/v1/projects', bob)).status).toBe(200);
      const out = await withSession('DELETE', '/dashboard/api/session', bob);
      expect(out.status).toBe(200);
      expect(out.headers.get('set-cookie')).toMatch(/^flagops_session=; .*Max-Age=0/);
      const after = await withSession('GET', '/api/v1/projects', bob);
      expect(after.status).toBe(401);
      expect(after.body.error.message).toMatch(/sign in again/);
    });

    it('removing a user (admin key) signs them out everywhere', async () => {
      const dave = await addUser(svc, 'dave', 'Dave');
      const session = await signIn(svc.controlUrl, 'dave');
      const admin = httpClient(svc.controlUrl, svc.admin);
      expect((await admin.get('/api/v1/users')).body.users.map((u: Json) => u.username)).toContain('dave');
      expect((await admin.delete(`/api/v1/users/${dave.id}`)).status).toBe(200);
      expect((await withSession('GET', '/api/v1/projects', session)).status).toBe(401);
      expect((await admin.get('/api/v1/users')).body.users.map((u: Json) => u.username)).not.toContain('dave');
    });

    it('sessions survive a restart of the service', async () => {
      const erin = await signIn(svc.controlUrl, (await addUser(svc, 'erin', 'Erin')).username);
      await svc.restart();
      expect((await withSession('GET', '/api/v1/projects', erin)).status).toBe(200);
    });
  });

  describe('the users API (admin keys only)', () => {
    it("creates, lists and removes users of the admin key's organisation; never shows a hash", async () => {
      const admin = httpClient(svc.controlUrl, svc.orgs.globex.admin);
      const created = await admin.post('/api/v1/users', { username: 'gina', name: 'Gina', password: 'gina-password-1' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^usr_/),
        org: 'globex',
        username: 'gina',
        name: 'Gina',
        createdAt: expect.any(String),
      });
      const listed = await admin.get('/api/v1/users');
      expect(listed.body.users.map((u: Json) => u.username)).toEqual(['gina']);
      expect(JSON.stringify(listed.body)).not.toMatch(/scrypt|password/);
      expect((await httpClient(svc.controlUrl, svc.admin).delete(`/api/v1/users/${created.body.id}`)).status).toBe(404);
    });

    it('answers 400 naming the field, 409 for a taken username, 403 to an agent key', async () => {
      const admin = httpClient(svc.controlUrl, svc.admin);
      const bad = await admin.post('/api/v1/users', { username: 'x y', name: 'X', password: 'long-password-1' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(/^username:/);
      expect((await admin.post('/api/v1/users', { username: 'ALICE', name: 'Other Alice', password: 'long-password-1' })).status).toBe(409);
      expect((await httpClient(svc.controlUrl, svc.agent).get('/api/v1/users')).status).toBe(403);
    });

    it('refuses a role limited to a project the organisation does not have, naming it, and creates no user', async () => {
      const admin = httpClient(svc.controlUrl, svc.admin);
      const typo = await admin.post('/api/v1/users', {
        username: 'sam',
        name: 'Sam',
        password: 'long-password-1',
        role: 'editor@shop,shpo',
      });
      expect(typo).toMatchObject({ status: 400, body: { error: { code: 'invalid_input' } } });
      expect(typo.body.error.message).toBe(
        'role: "editor@shop,shpo" names "shpo", which the organisation has no project of (it has: shop)',
      );
      expect((await admin.get('/api/v1/users')).body.users.map((u: Json) => u.username)).not.toContain('sam');
      expect(
        (await admin.post('/api/v1/users', { username: 'sam', name: 'Sam', password: 'long-password-1', role: 'editor@shop' })).status,
      ).toBe(201);
    });
  });

  describe('the dry-run validation endpoint', () => {
    it("checks a draft with the server's schemas and writes nothing", async () => {
      const res = await withSession('POST', '/dashboard/api/validate-config', alice, {
        kind: 'boolean',
        config: { rolloutPct: 150 },
        rulesYaml: '- serve: maybe\n',
      });
      expect(res.status).toBe(200);
      expect(res.body.rules).toBeNull();
      expect(res.body.issues.map((i: Json) => i.field)).toEqual(['rolloutPct', 'rules[0].serve']);
    });

    it('needs a credential like every API call', async () => {
      const res = await fetch(`${svc.controlUrl}/dashboard/api/validate-config`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"kind":"boolean"}',
      });
      expect(res.status).toBe(401);
    });
  });
});
