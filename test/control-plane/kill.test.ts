import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, committedFile, createFlag, createProject, headMessage, headTrailer } from './fixtures.js';

describe('POST /flags/:id/environments/:env/kill', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let project: Json;
  let n = 0;
  const newFlag = () => createFlag(admin, project.id, { key: `kill-${++n}` });

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
  });
  afterAll(() => svc.stop());

  it('answers 200 with the whole flag, killed in that environment only, with killedAt and killedBy', async () => {
    const flag = await newFlag();
    const res = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    expect(res.status).toBe(200);
    expect(res.body.alreadyKilled).toBe(false);
    expect(res.body.environments.prod).toEqual({
      ...flag.environments.prod,
      killed: true,
      killedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      killedBy: expect.stringMatching(/^svc_agt_/),
    });
    expect(res.body.environments.dev).toEqual(flag.environments.dev);
    expect(res.body.environments.staging).toEqual(flag.environments.staging);
  });

  it('is one commit touching only kills.yaml; the config and its version are untouched', async () => {
    const flag = await newFlag();
    const before = commitCount(svc.gitdir());
    const config = committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`);
    const res = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    expect(res.body.environments.prod.version).toBe(1);
    expect(commitCount(svc.gitdir())).toBe(before + 1);
    expect(committedFile(svc.gitdir(), `projects/shop/environments/prod/${flag.key}.yaml`)).toBe(config);
    expect(committedFile(svc.gitdir(), 'projects/shop/environments/prod/kills.yaml')).toContain(flag.key);
    expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('kill');
    expect(headTrailer(svc.gitdir(), 'Flagops-Actor-Type')).toBe('agent');
    expect(headTrailer(svc.gitdir(), 'Flagops-Key-Prefix')).toMatch(/^svc_agt_/);
  });

  it('killing a killed flag is harmless and says so: alreadyKilled, the first kill stands, no commit', async () => {
    const flag = await newFlag();
    const first = await agent.post(`/api/v1/flags/${flag.id}/environments/staging/kill`);
    const before = commitCount(svc.gitdir());
    const again = await admin.post(`/api/v1/flags/${flag.id}/environments/staging/kill`);
    expect(again.status).toBe(200);
    expect(again.body.alreadyKilled).toBe(true);
    expect(again.body.environments.staging.killedAt).toBe(first.body.environments.staging.killedAt);
    expect(again.body.environments.staging.killedBy).toBe(first.body.environments.staging.killedBy);
    expect(commitCount(svc.gitdir())).toBe(before);
  });

  it('a reason sent as { reason } reaches the commit message and the flag', async () => {
    const flag = await newFlag();
    const res = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'error rate above 5%' });
    expect(res.status).toBe(200);
    expect(res.body.environments.prod.killReason).toBe('error rate above 5%');
    expect(headMessage(svc.gitdir())).toContain('reason: error rate above 5%');
  });

  it('keeps a reason of several paragraphs whole in the audit trail, with no trailer of its own in git log', async () => {
    const flag = await newFlag();
    const reason = [
      'Error rate 7% after deploy 1432.',
      '',
      'Flagops-Actor-Type: admin',
      'Flagops-Key-Prefix: svc_adm_AAAAAAAA',
      '',
      'Rollback planned; see INC-42.',
    ].join('\n');
    const res = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason });
    expect(res.status).toBe(200);
    expect(res.body.environments.prod.killReason).toBe(reason);
    const [entry] = (await agent.get('/api/v1/audit?limit=1')).body.entries;
    expect(entry).toMatchObject({ action: 'kill', flagKey: flag.key, reason, actor: { type: 'agent', keyPrefix: svc.agent.slice(0, 16) } });
    const trailers = git(svc.gitdir(), 'log', '-1', '--format=%(trailers)', 'main').split('\n');
    expect(trailers.map((line) => line.split(':')[0])).toEqual([
      'Flagops-Action',
      'Flagops-Project',
      'Flagops-Flag',
      'Flagops-Environment',
      'Flagops-Actor-Type',
      'Flagops-Actor',
      'Flagops-Key-Prefix',
      'Flagops-Signature',
    ]);
    expect(trailers).toContain('Flagops-Actor-Type: agent');
    expect(trailers).not.toContain('Flagops-Key-Prefix: svc_adm_AAAAAAAA');
  });

  it('refuses a body other than { reason } with 400 naming the field', async () => {
    const flag = await newFlag();
    const extra = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'x', force: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('force');
    const typed = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 5 });
    expect(typed.status).toBe(400);
    expect(typed.body.error.message).toContain('reason');
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.killed).toBe(false);
  });

  it('is sticky: a config update does not clear it', async () => {
    const flag = await newFlag();
    await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    const res = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    expect(res.body.environments.prod).toMatchObject({ enabled: true, version: 2, killed: true });
  });

  it('answers 404 for an unknown environment or flag', async () => {
    const flag = await newFlag();
    expect((await agent.post(`/api/v1/flags/${flag.id}/environments/production/kill`)).status).toBe(404);
    expect((await agent.post('/api/v1/flags/flg_nope/environments/prod/kill')).status).toBe(404);
  });
});
