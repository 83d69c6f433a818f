import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

describe('a restart (the data dir holds everything)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  it('keeps projects, flags, configs, kills and keys; a revoked key stays revoked', async () => {
    const admin = () => httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin(), 'shop');
    const flag = await createFlag(admin(), project.id, { key: 'checkout' });
    await admin().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 30 });
    const { alreadyKilled: _, ...before }: Json = (await admin().post(`/api/v1/flags/${flag.id}/environments/staging/kill`)).body;
    const sdk: Json = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'staging' })).body;
    const revoked: Json = (await admin().post('/api/v1/keys', { kind: 'agent' })).body;
    await admin().delete(`/api/v1/keys/${revoked.id}`);

    await svc.restart();

    expect((await admin().get(`/api/v1/flags/${flag.id}`)).body).toEqual(before);
    const evaluation = await httpClient(svc.evalUrl, sdk.key).post('/v1/evaluate', { key: 'checkout' });
    expect(evaluation.body.checkout).toMatchObject({ value: false, reason: 'killed' });
    expect((await httpClient(svc.controlUrl, revoked.key).get('/api/v1/projects')).status).toBe(401);
  });
});
