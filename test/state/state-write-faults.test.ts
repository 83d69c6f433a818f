import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { addUser, type SignedIn, sessionHeaders, signIn as signInWith } from '../dashboard/helpers/dashboard-session.js';
import { type HttpResponse, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/**
 * Makes a directory refuse new entries, as a read-only mount does: chattr +i for root, whom file modes do not
 * stop, a-w for anyone else. Every state file is replaced whole through a new file beside it, so each write of
 * the state then fails where a full disk makes it fail.
 */
function setWritable(dir: string, writable: boolean): void {
  if (process.getuid?.() === 0) execFileSync('chattr', [writable ? '-i' : '+i', dir]);
  else execFileSync('chmod', [writable ? 'u+w' : 'a-w', dir]);
}

function expectUnavailable(res: HttpResponse, svc: TestService): void {
  expect(res.status).toBe(503);
  expect(res.body.error).toEqual({
    code: 'unavailable',
    message: expect.stringMatching(
      /^the state file [a-z]+\.json cannot be written: (operation not permitted \(EPERM\)|permission denied \(EACCES\))$/,
    ),
  });
  expect(res.body.error.message).not.toContain(svc.dataDir);
}

const signIn = (svc: TestService, username: string) =>
  fetch(`${svc.controlUrl}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: svc.controlUrl, 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify({ username, password: `${username}-password-1` }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json, headers: res.headers }));

/** The session's own view of itself: 200 while it signs its person in. */
const sessionNow = (svc: TestService, session: SignedIn) =>
  fetch(`${svc.controlUrl}/dashboard/api/session`, { headers: sessionHeaders(svc.controlUrl, session) }).then((res) => res.status);

const signOut = (svc: TestService, session: SignedIn) =>
  fetch(`${svc.controlUrl}/dashboard/api/session`, { method: 'DELETE', headers: sessionHeaders(svc.controlUrl, session) }).then(
    async (res) => ({ status: res.status, body: (await res.json()) as Json, headers: res.headers }),
  );

describe('a state directory that cannot be written (the disk full, read-only)', () => {
  let svc: TestService;
  let stateDir: string;
  let flagId: string;
  let sdk: { id: string; key: string };
  let webhookId: string;
  let carolId: string;
  let triggerId: string;
  let session: SignedIn;
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const evaluate = () => httpClient(svc.evalUrl, sdk.key).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });

  beforeAll(async () => {
    svc = await startTestService();
    const project = await createProject(admin(), 'shop');
    flagId = (await createFlag(admin(), project.id, { key: 'checkout' })).id;
    sdk = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    await addUser(svc, 'alice', 'Alice Martin');
    carolId = (await addUser(svc, 'carol', 'Carol Diaz')).id;
    session = await signInWith(svc.controlUrl, 'alice');
    const webhook = await admin().post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/first' });
    expect(webhook.status).toBe(201);
    webhookId = webhook.body.id;
    const trigger = await admin().post(`/api/v1/flags/${flagId}/environments/staging/triggers`, { name: 'on-call' });
    expect(trigger.status).toBe(201);
    triggerId = trigger.body.id;
    stateDir = path.join(svc.dataDir, 'state');
    setWritable(stateDir, false);
  }, 60_000);
  afterAll(async () => {
    if (stateDir) setWritable(stateDir, true);
    await svc?.stop();
  });

  it('answers creating and revoking a key 503 unavailable saying why, and the key revoked still works', async () => {
    expectUnavailable(await admin().post('/api/v1/keys', { kind: 'agent', name: 'on-a-full-disk' }), svc);
    expectUnavailable(await admin().delete(`/api/v1/keys/${sdk.id}`), svc);
    const names = (await admin().get('/api/v1/keys')).body.keys.map((k: Json) => k.name);
    expect(names).not.toContain('on-a-full-disk');
    expect((await evaluate()).status).toBe(200);
  });

  it('answers creating a webhook or a trigger 503 unavailable, and lists neither', async () => {
    expectUnavailable(await admin().post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }), svc);
    expect((await admin().get('/api/v1/webhooks')).body.webhooks.map((w: Json) => w.url)).toEqual(['http://127.0.0.1:9/first']);
    expectUnavailable(await admin().post(`/api/v1/flags/${flagId}/environments/prod/triggers`, { name: 'pager' }), svc);
    expect((await admin().get(`/api/v1/flags/${flagId}/environments/prod/triggers`)).body.triggers).toEqual([]);
  });

  it('answers adding a dashboard user and signing in 503 unavailable, and sets no cookie', async () => {
    expectUnavailable(await admin().post('/api/v1/users', { username: 'bob', name: 'Bob', password: 'bob-password-1' }), svc);
    const signedIn = await signIn(svc, 'alice');
    expectUnavailable(signedIn, svc);
    expect(signedIn.headers.get('set-cookie')).toBeNull();
  });

  describe('removing or ending what exists', () => {
    const webhookIds = async () => (await admin().get('/api/v1/webhooks')).body.webhooks.map((w: Json) => w.id);
    const userIds = async () => (await admin().get('/api/v1/users')).body.users.map((u: Json) => u.id);
    const triggerIds = async () =>
      (await admin().get(`/api/v1/flags/${flagId}/environments/staging/triggers`)).body.triggers.map((t: Json) => t.id);
    const stillThere = async () => {
      expect(await webhookIds()).toContain(webhookId);
      expect(await sessionNow(svc, session)).toBe(200);
      expect(await userIds()).toContain(carolId);
      expect(await triggerIds()).toEqual([triggerId]);
    };

    it('answers removing a webhook 503 unavailable, and still lists it', async () => {
      expectUnavailable(await admin().delete(`/api/v1/webhooks/${webhookId}`), svc);
      expect(await webhookIds()).toContain(webhookId);
    });

    it('answers signing out 503 unavailable, keeps the cookie, and the session still signs its person in', async () => {
      const signedOut = await signOut(svc, session);
      expectUnavailable(signedOut, svc);
      expect(signedOut.headers.get('set-cookie')).toBeNull();
      expect(await sessionNow(svc, session)).toBe(200);
    });

    it('answers removing a user or a trigger 503 unavailable, and still lists them', async () => {
      expectUnavailable(await admin().delete(`/api/v1/users/${carolId}`), svc);
      expectUnavailable(await admin().delete(`/api/v1/triggers/${triggerId}`), svc);
      expect(await userIds()).toContain(carolId);
      expect(await triggerIds()).toEqual([triggerId]);
    });

    it('still has each of them after a restart on the same data once the state can be written, and removes them then', async () => {
      setWritable(stateDir, true);
      await svc.restart();
      await stillThere();
      expect((await evaluate()).status).toBe(200); // the key whose revocation was refused
      expect((await admin().delete(`/api/v1/webhooks/${webhookId}`)).status).toBe(200);
      expect((await signOut(svc, session)).status).toBe(200);
      expect((await admin().delete(`/api/v1/users/${carolId}`)).status).toBe(200);
      expect((await admin().delete(`/api/v1/triggers/${triggerId}`)).status).toBe(200);
      expect(await webhookIds()).not.toContain(webhookId);
      expect(await sessionNow(svc, session)).toBe(401);
      expect(await userIds()).not.toContain(carolId);
      expect(await triggerIds()).toEqual([]);
    });
  });

  it('takes each of them once the state can be written again, none made twice', async () => {
    setWritable(stateDir, true);
    expect((await admin().post('/api/v1/keys', { kind: 'agent', name: 'on-a-full-disk' })).status).toBe(201);
    expect((await admin().delete(`/api/v1/keys/${sdk.id}`)).status).toBe(200);
    expect((await admin().post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
    expect((await admin().post(`/api/v1/flags/${flagId}/environments/prod/triggers`, { name: 'pager' })).status).toBe(201);
    expect((await admin().post('/api/v1/users', { username: 'bob', name: 'Bob', password: 'bob-password-1' })).status).toBe(201);
    expect((await signIn(svc, 'alice')).status).toBe(200);
    const names = (await admin().get('/api/v1/keys')).body.keys.map((k: Json) => k.name);
    expect(names.filter((n: string) => n === 'on-a-full-disk')).toHaveLength(1);
    expect((await admin().get('/api/v1/webhooks')).body.webhooks.map((w: Json) => w.url)).toEqual(['http://127.0.0.1:9/hook']);
    expect((await evaluate()).status).toBe(401);
  });
});
