import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

// A flag's files copied to a new key that comes first by key, its id kept, straight into the repository on
// disk (as a host merge in remote mode, or the operator, would put it there): the original keeps serving.
describe('a flag copied with its id by a commit on main', () => {
  let svc: TestService;
  let admin: HttpClient;
  let evaluation: HttpClient;
  let other: Json;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    other = await createFlag(admin, project.id, { key: 'other' });
    await admin.post(`/api/v1/flags/${other.id}/environments/prod/kill`);
    const sdk: Json = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body;
    evaluation = httpClient(svc.evalUrl, sdk.key);
    pushEdit(svc.gitdir(), (checkout) => {
      const shop = path.join(checkout, 'projects/shop');
      const flagFile = readFileSync(path.join(shop, 'flags/other.yaml'), 'utf8');
      expect(flagFile).toContain(`id: ${other.id}`);
      writeFileSync(path.join(shop, 'flags/aother.yaml'), flagFile.replace('key: other', 'key: aother'));
      for (const env of ['dev', 'staging', 'prod'])
        copyFileSync(path.join(shop, `environments/${env}/other.yaml`), path.join(shop, `environments/${env}/aother.yaml`));
    });
    // /healthz names the clash once the commit is read.
    const started = Date.now();
    while (!JSON.stringify((await admin.get('/healthz')).body).includes('aother.yaml')) {
      if (Date.now() - started > 10_000) throw new Error('the pushed copy was not read');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  afterAll(() => svc.stop());

  it('leaves the original served, still killed, and the copy not served', async () => {
    const res = await evaluation.post('/v1/evaluate', { keys: ['other', 'aother'] });
    expect(res.body).toMatchObject({ other: { value: false, reason: 'killed' }, aother: { value: null, reason: 'flag_not_found' } });
  });

  it('keeps the id on the original: reads and kills by id reach it', async () => {
    expect((await admin.get(`/api/v1/flags/${other.id}`)).body.key).toBe('other');
    const killed = await admin.post(`/api/v1/flags/${other.id}/environments/dev/kill`);
    expect(killed.status).toBe(200);
    expect(killed.body.key).toBe('other');
  });

  it('names the copy in /healthz, at its id', async () => {
    const health = await admin.get('/healthz');
    const invalid: Json[] = health.body.organisations[0].invalidFiles;
    expect(invalid).toEqual([
      expect.objectContaining({
        file: 'projects/shop/flags/aother.yaml',
        message: `/id: id "${other.id}" is already used by projects/shop/flags/other.yaml; flag ids must be unique`,
      }),
    ]);
  });
});
