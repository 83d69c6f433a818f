import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject, headTrailer } from './fixtures.js';

describe('POST /flags/:id/environments/:env/promote', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let project: Json;
  let n = 0;
  const rules = [{ id: 'eu', conditions: [{ attribute: 'country', op: 'eq', value: 'DE' }], serve: 'on' }];

  /** A flag whose staging config differs from prod in every field. */
  async function stagedFlag(): Promise<Json> {
    const flag = await createFlag(admin, project.id, { key: `promo-${++n}` });
    const res = await admin.put(`/api/v1/flags/${flag.id}/environments/staging/config`, {
      enabled: true,
      rolloutPct: 40,
      valueOn: false,
      valueOff: true,
      rules,
    });
    return res.body;
  }

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(admin, 'shop');
  });
  afterAll(() => svc.stop());

  it('replaces the whole destination config by the source’s, version = destination’s + 1, in one commit', async () => {
    const flag = await stagedFlag();
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 3 });
    const before = commitCount(svc.gitdir());
    const res = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, { fromEnv: 'staging' });
    expect(res.status).toBe(200);
    const { version: _v, ...source } = flag.environments.staging;
    expect(res.body.environments.prod).toEqual({ ...source, version: 3 });
    expect(res.body.environments.staging).toEqual(flag.environments.staging);
    expect(commitCount(svc.gitdir())).toBe(before + 1);
    expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('promote');
    expect(headTrailer(svc.gitdir(), 'Flagops-Environment')).toBe('prod');
    expect(headTrailer(svc.gitdir(), 'Flagops-From-Environment')).toBe('staging');
  });

  it('leaves the destination’s kill state as it is', async () => {
    const flag = await stagedFlag();
    await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`);
    const res = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, { fromEnv: 'staging' });
    expect(res.body.environments.prod).toMatchObject({ enabled: true, rolloutPct: 40, killed: true });
  });

  it('an agent key may promote into staging but not into prod (403 forbidden)', async () => {
    const flag = await stagedFlag();
    const staging = await agent.post(`/api/v1/flags/${flag.id}/environments/staging/promote`, { fromEnv: 'dev' });
    expect(staging.status).toBe(200);
    const before = commitCount(svc.gitdir());
    const prod = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, { fromEnv: 'staging' });
    expect(prod.status).toBe(403);
    expect(prod.body.error.code).toBe('forbidden');
    expect(prod.body.error.message).toContain('prod');
    expect(commitCount(svc.gitdir())).toBe(before);
  });

  it('refuses fromEnv equal to the destination, missing or unknown with 400 naming fromEnv', async () => {
    const flag = await stagedFlag();
    for (const body of [{ fromEnv: 'prod' }, {}, { fromEnv: 'qa' }]) {
      const res = await admin.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toContain('fromEnv');
    }
  });

  it('answers 404 for an unknown destination environment or flag', async () => {
    const flag = await stagedFlag();
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/qa/promote`, { fromEnv: 'dev' })).status).toBe(404);
    expect((await admin.post('/api/v1/flags/flg_nope/environments/prod/promote', { fromEnv: 'dev' })).status).toBe(404);
  });

  it('without FLAGOPS_PROMETHEUS_URL, refuses to copy a pushed guard with 400 naming fromEnv, and changes nothing', async () => {
    const flag = await stagedFlag();
    const at = new Date(Date.now() + 3_600_000).toISOString();
    pushEdit(svc.gitdir(), (checkout) =>
      appendFileSync(
        path.join(checkout, `projects/shop/environments/staging/${flag.key}.yaml`),
        `schedule:\n  - at: '${at}'\n    set: { rolloutPct: 80 }\n    guard: { query: x, max: 1, intervalSeconds: 30 }\n`,
      ),
    );
    await expect
      .poll(async () => (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.staging.schedule?.length, { timeout: PROMPTLY_MS })
      .toBe(1);
    const prod = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    const before = commitCount(svc.gitdir());
    for (const url of [`/api/v1/flags/${flag.id}/environments/prod/promote`, `/api/v1/flags/${flag.id}/environments/prod/preview`]) {
      const res = await admin.post(url, { fromEnv: 'staging' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.message).toBe(
        "fromEnv: the staging config's schedule[0] has a guard, and a guard needs FLAGOPS_PROMETHEUS_URL (the Prometheus server its query runs against), which this service does not have",
      );
    }
    expect(commitCount(svc.gitdir())).toBe(before);
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toEqual(prod);
  });

  it('a preview without config or fromEnv, or with both, is 400 naming them', async () => {
    const flag = await createFlag(admin, project.id, { key: 'preview-body' });
    const preview = (body: unknown) => admin.post(`/api/v1/flags/${flag.id}/environments/prod/preview`, body);
    expect(await preview({})).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_input', message: expect.stringMatching(/^give config .* or fromEnv /) } },
    });
    expect(await preview({ config: {}, fromEnv: 'dev' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_input', message: expect.stringMatching(/^give config or fromEnv, not both/) } },
    });
  });
});
