import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject } from './fixtures.js';

describe('organisations are isolated (another organisation’s resource is 404)', () => {
  let svc: TestService;
  let acme: HttpClient;
  let globex: HttpClient;
  let project: Json;
  let flag: Json;
  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    acme = httpClient(svc.controlUrl, svc.orgs.acme.admin);
    globex = httpClient(svc.controlUrl, svc.orgs.globex.admin);
    project = await createProject(globex, 'secret-project');
    flag = await createFlag(globex, project.id, { key: 'secret-flag' });
  });
  afterAll(() => svc.stop());

  it('another organisation’s projects are not listed', async () => {
    expect((await acme.get('/api/v1/projects')).body).toEqual({ projects: [] });
    expect((await globex.get('/api/v1/projects')).body.projects).toHaveLength(1);
  });

  it('every route naming another organisation’s flag or project answers 404 and changes nothing', async () => {
    const before = commitCount(svc.gitdir('globex'));
    const requests: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/projects/${project.id}/flags`],
      ['POST', `/api/v1/projects/${project.id}/flags`, { key: 'intruder' }],
      ['GET', '/api/v1/flags/lookup?projectSlug=secret-project&key=secret-flag'],
      ['GET', `/api/v1/flags/${flag.id}`],
      ['PATCH', `/api/v1/flags/${flag.id}`, { name: 'pwned' }],
      ['DELETE', `/api/v1/flags/${flag.id}`],
      ['PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true }],
      ['POST', `/api/v1/flags/${flag.id}/environments/prod/kill`],
      ['POST', `/api/v1/flags/${flag.id}/environments/prod/promote`, { fromEnv: 'dev' }],
      ['GET', `/api/v1/flags/${flag.id}/environments/prod/stats`],
      ['POST', '/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' }],
      ['GET', `/api/v1/audit?projectId=${project.id}`],
    ];
    for (const [method, path, body] of requests) {
      const res = await acme.request(method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(commitCount(svc.gitdir('globex'))).toBe(before);
    expect((await globex.get(`/api/v1/flags/${flag.id}`)).body).toEqual(flag);
  });

  it('the same slug may exist in two organisations, each seeing its own', async () => {
    const mine = await createProject(acme, 'secret-project');
    const acmeFlag = await createFlag(acme, mine.id, { key: 'secret-flag', kind: 'string', defaultValue: 'acme' });
    expect(acmeFlag.defaultValue).toBe('acme');
    expect((await globex.get(`/api/v1/flags/${flag.id}`)).body.defaultValue).toBe(false);
  });
});
