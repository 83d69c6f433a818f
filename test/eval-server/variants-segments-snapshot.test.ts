import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

describe('the snapshot and OFREP with variants, segments and prerequisites', () => {
  let svc: TestService;
  let api: HttpClient;
  let project: Json;
  let sdkKey: string;
  const snapshot = async () => {
    const res = await fetch(`${svc.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${sdkKey}` } });
    return (await res.json()) as Json;
  };

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(api, 'shop');
    sdkKey = (await api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  });
  afterAll(() => svc.stop());

  it('carries segments keyed by key, the flags with variants and prerequisites, and a new version when a segment changes', async () => {
    await api.put(`/api/v1/projects/${project.id}/segments/beta-testers`, { userIds: ['ana'] });
    const base = await createFlag(api, project.id, { key: 'base' });
    const flag = await createFlag(api, project.id, { key: 'checkout-v2', kind: 'string' });
    await api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
      enabled: true,
      rolloutPct: 100,
      valueOn: 'on',
      valueOff: 'off',
      variants: [
        { name: 'blue', value: 'b', weight: 50 },
        { name: 'green', value: 'g', weight: 50 },
      ],
      prerequisites: [{ flag: base.key, variation: 'off' }],
      rules: [{ id: 'beta', serve: 'green', conditions: [{ op: 'in_segment', value: 'beta-testers' }] }],
    });
    const before = await snapshot();
    expect(before.segments).toEqual({ 'beta-testers': { userIds: ['ana'], conditions: [] } });
    expect(before.flags['checkout-v2']).toMatchObject({
      variants: [
        { name: 'blue', value: 'b', weight: 50 },
        { name: 'green', value: 'g', weight: 50 },
      ],
      prerequisites: [{ flag: 'base', variation: 'off' }],
    });
    await api.put(`/api/v1/projects/${project.id}/segments/beta-testers`, { userIds: ['ana', 'bo'] });
    const after = await snapshot();
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.segments['beta-testers'].userIds).toEqual(['ana', 'bo']);

    const ofrep = await fetch(`${svc.evalUrl}/ofrep/v1/evaluate/flags/checkout-v2`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: 'bo' } }),
    });
    expect(await ofrep.json()).toMatchObject({ key: 'checkout-v2', value: 'g', reason: 'TARGETING_MATCH', variant: 'green' });
  });

  it('takes SDK counts of a variant of the flag, and leaves out a variation the flag does not have', async () => {
    const post = (variation: string) =>
      fetch(`${svc.evalUrl}/v1/counts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          counts: [
            { flagKey: 'checkout-v2', variation, hour: new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString(), count: 3 },
          ],
        }),
      });
    const taken = await post('green');
    expect(taken.status).toBe(202);
    expect(await taken.json()).toEqual({ accepted: 1 });
    const left = await post('purple');
    expect(left.status).toBe(202);
    expect(await left.json()).toEqual({ accepted: 0, ignored: 1 });
  });
});
