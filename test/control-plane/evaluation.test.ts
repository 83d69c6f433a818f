import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

describe('control-plane writes reach the evaluation API', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let evaluation: HttpClient;
  let project: Json;
  let n = 0;

  /** A flag fully on in prod, so that anything serving valueOff shows a kill or a change. */
  async function liveFlag(body: Record<string, unknown> = {}): Promise<Json> {
    const flag = await createFlag(admin, project.id, { key: `live-${++n}`, ...body });
    return (await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).body;
  }
  const evaluate = async (key: string) => (await evaluation.post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
    const sdk = await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' });
    evaluation = httpClient(svc.evalUrl, sdk.body.key);
  });
  afterAll(() => svc.stop());

  it('a config update is served as soon as its response arrives (read-your-writes)', async () => {
    const flag = await liveFlag();
    expect(await evaluate(flag.key)).toMatchObject({ value: true, reason: 'default', variation: 'on' });
  });

  it('a kill is served (valueOff, reason killed) as soon as the kill response arrives', async () => {
    const flag = await liveFlag();
    const res = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    expect(res.status).toBe(200);
    expect(await evaluate(flag.key)).toEqual({ value: false, reason: 'killed', variation: 'off' });
  });

  it('a killed flag ignores rules and rollout until clearKill, then its config applies again', async () => {
    const flag = await liveFlag();
    await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rules: [{ id: 'everyone', serve: 'on' }] });
    expect((await evaluate(flag.key)).reason).toBe('killed');
    await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
    expect(await evaluate(flag.key)).toMatchObject({ value: true, reason: 'rule_match', ruleId: 'everyone' });
  });

  it('an archived flag serves its defaultValue with reason archived', async () => {
    const flag = await liveFlag({ kind: 'string', defaultValue: 'classic' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { valueOn: 'new', valueOff: 'old' });
    expect((await evaluate(flag.key)).value).toBe('new');
    await admin.delete(`/api/v1/flags/${flag.id}`);
    expect(await evaluate(flag.key)).toMatchObject({ value: 'classic', reason: 'archived' });
  });

  it('a promotion into prod is served at once', async () => {
    const flag = await createFlag(admin, project.id, { key: `promoted-${++n}` });
    await admin.put(`/api/v1/flags/${flag.id}/environments/staging/config`, { enabled: true, rolloutPct: 100 });
    expect((await evaluate(flag.key)).reason).toBe('flag_disabled');
    await admin.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, { fromEnv: 'staging' });
    expect(await evaluate(flag.key)).toMatchObject({ value: true, reason: 'default' });
  });

  it('a revoked sdk key gets 401 from the evaluation API', async () => {
    const created = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' })).body;
    const client = httpClient(svc.evalUrl, created.key);
    expect((await client.get('/v1/snapshot')).status).toBe(200);
    await admin.delete(`/api/v1/keys/${created.id}`);
    const res = await client.get('/v1/snapshot');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('an engineer’s git push of a config is served within 1 s and read back by the control plane', async () => {
    const flag = await createFlag(admin, project.id, { key: `pushed-${++n}` });
    expect((await evaluate(flag.key)).reason).toBe('flag_disabled');
    pushEdit(
      svc.gitdir(),
      (checkout) => {
        const file = path.join(checkout, 'projects/shop/environments/prod', `${flag.key}.yaml`);
        writeFileSync(file, 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: 2\nrules: []\n');
      },
      `turn ${flag.key} on in prod`,
    );
    const pushed = Date.now();
    let result = await evaluate(flag.key);
    while (result.reason !== 'default' && Date.now() - pushed < PROMPTLY_MS) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      result = await evaluate(flag.key);
    }
    expect(result).toMatchObject({ value: true, reason: 'default' });
    const read = await admin.get(`/api/v1/flags/${flag.id}`);
    expect(read.body.environments.prod).toMatchObject({ enabled: true, rolloutPct: 100, version: 2 });
  });
});
