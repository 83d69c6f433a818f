import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { addUser } from '../dashboard/helpers/dashboard-session.js';
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

describe('a state directory that cannot be written (the disk full, read-only)', () => {
  let svc: TestService;
  let stateDir: string;
  let flagId: string;
  let sdk: { id: string; key: string };
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const evaluate = () => httpClient(svc.evalUrl, sdk.key).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });

  beforeAll(async () => {
    svc = await startTestService();
    const project = await createProject(admin(), 'shop');
    flagId = (await createFlag(admin(), project.id, { key: 'checkout' })).id;
    sdk = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    await addUser(svc, 'alice', 'Alice Martin');
    expect((await admin().post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/first' })).status).toBe(201);
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
    expect((await admin().get('/api/v1/webhooks')).body.webhooks).toHaveLength(2);
    expect((await evaluate()).status).toBe(401);
  });
});
