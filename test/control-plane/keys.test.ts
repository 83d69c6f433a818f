import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createProject } from './fixtures.js';

describe('keys', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
  });
  afterAll(() => svc.stop());

  it('creates an agent key: 201 with the key shown once, and it works on the control plane', async () => {
    const res = await admin.post('/api/v1/keys', { kind: 'agent', name: 'deploy-bot' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: expect.any(String), kind: 'agent', name: 'deploy-bot', createdAt: expect.any(String) });
    expect(res.body.key).toMatch(/^svc_agt_[0-9A-Za-z]{32}$/);
    expect(res.body.prefix).toBe(res.body.key.slice(0, 16));
    expect((await httpClient(svc.controlUrl, res.body.key).get('/api/v1/projects')).status).toBe(200);
  });

  it('creates an sdk key for a project and environment; it evaluates there and gets 401 on the control plane', async () => {
    const res = await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'staging' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'sdk', projectId: project.id, environment: 'staging' });
    expect(res.body.key).toMatch(/^svc_sdk_/);
    const evaluation = await httpClient(svc.evalUrl, res.body.key).get('/v1/snapshot');
    expect(evaluation.status).toBe(200);
    expect(evaluation.body.environment).toBe('staging');
    const control = await httpClient(svc.controlUrl, res.body.key).get('/api/v1/projects');
    expect(control.status).toBe(401);
    expect(control.body.error.code).toBe('unauthorized');
  });

  it('refuses an sdk key without projectId or environment, or with a bad kind, with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ kind: 'sdk', environment: 'prod' }, 'projectId'],
      [{ kind: 'sdk', projectId: project.id }, 'environment'],
      [{ kind: 'sdk', projectId: project.id, environment: 'qa' }, 'environment'],
      [{ kind: 'root' }, 'kind'],
      [{ kind: 'agent', projectId: project.id }, 'projectId'],
      [{ kind: 'agent', scopes: ['all'] }, 'scopes'],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post('/api/v1/keys', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
  });

  it('refuses a name with a control character (it authors commits): 400, and no key is made', async () => {
    const before = (await admin.get('/api/v1/keys')).body.keys.length;
    for (const name of ['nul \u0000 key', 'two\nlines', 'tab\there']) {
      const res = await admin.post('/api/v1/keys', { kind: 'agent', name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input' });
      expect(res.body.error.message).toContain('name');
    }
    expect((await admin.get('/api/v1/keys')).body.keys.length).toBe(before);
  });

  it('refuses an sdk key for a project the organisation does not have with 404', async () => {
    const other = await createProject(httpClient(svc.controlUrl, svc.orgs.globex.admin), 'globex-shop');
    for (const projectId of ['prj_nope', other.id]) {
      const res = await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' });
      expect(res.status, projectId).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('lists the organisation’s keys without secrets or hashes', async () => {
    const res = await admin.get('/api/v1/keys');
    expect(res.status).toBe(200);
    expect(res.body.keys.length).toBeGreaterThanOrEqual(4);
    for (const key of res.body.keys) {
      expect(key).not.toHaveProperty('key');
      expect(key).not.toHaveProperty('hash');
      expect(key.org).toBe('acme');
    }
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(svc.admin);
    expect(text).not.toContain(svc.orgs.globex.admin.slice(0, 16));
  });

  it('revokes a key: 200, marked revoked, and 401 from then on', async () => {
    const created = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'temp' })).body;
    const temp = httpClient(svc.controlUrl, created.key);
    expect((await temp.get('/api/v1/projects')).status).toBe(200);
    const res = await admin.delete(`/api/v1/keys/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, revokedAt: expect.any(String) });
    expect(res.body).not.toHaveProperty('key');
    const after = await temp.get('/api/v1/projects');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
    expect((await admin.get('/api/v1/keys')).body.keys.find((k: Json) => k.id === created.id).revokedAt).toBe(res.body.revokedAt);
  });

  it('answers 404 when revoking an unknown key or another organisation’s key', async () => {
    expect((await admin.delete('/api/v1/keys/nope')).status).toBe(404);
    const globexKey = (await httpClient(svc.controlUrl, svc.orgs.globex.admin).get('/api/v1/keys')).body.keys[0];
    expect((await admin.delete(`/api/v1/keys/${globexKey.id}`)).status).toBe(404);
    expect((await httpClient(svc.controlUrl, svc.orgs.globex.admin).get('/api/v1/projects')).status).toBe(200);
  });
});
