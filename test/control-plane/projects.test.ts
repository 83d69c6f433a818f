import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, committedFile, createProject, headTrailer } from './fixtures.js';

describe('projects', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ planProjectLimit: 3 });
  });
  afterAll(() => svc.stop());

  it('lists no projects in a new organisation', async () => {
    const res = await httpClient(svc.controlUrl, svc.admin).get('/api/v1/projects');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ projects: [] });
  });

  it('creates a project with dev, staging and prod in one commit and answers 201 with it', async () => {
    const api = httpClient(svc.controlUrl, svc.admin);
    const before = commitCount(svc.gitdir());
    const res = await api.post('/api/v1/projects', { name: 'Shop', slug: 'shop' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^prj_/),
      name: 'Shop',
      slug: 'shop',
      environments: [
        { id: `${res.body.id}:dev`, name: 'dev' },
        { id: `${res.body.id}:staging`, name: 'staging' },
        { id: `${res.body.id}:prod`, name: 'prod' },
      ],
    });
    expect(commitCount(svc.gitdir())).toBe(before + 1);
    expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('project_create');
    expect(committedFile(svc.gitdir(), 'projects/shop/project.yaml')).toContain('slug: shop');
    for (const env of ['dev', 'staging', 'prod'])
      expect(committedFile(svc.gitdir(), `projects/shop/environments/${env}/kills.yaml`)).toBe('kills: {}');
    const list = await api.get('/api/v1/projects');
    expect(list.body.projects).toEqual([res.body]);
  });

  it('refuses a duplicate slug with 409 conflict', async () => {
    const res = await httpClient(svc.controlUrl, svc.admin).post('/api/v1/projects', { name: 'Shop again', slug: 'shop' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
  });

  it.each([['Shop'], ['-shop'], ['shop_1'], ['a'.repeat(64)], [''], [42]])(
    'refuses slug %j with 400 invalid_input naming slug',
    async (slug) => {
      const res = await httpClient(svc.controlUrl, svc.admin).post('/api/v1/projects', { name: 'Bad', slug });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.message).toContain('slug');
    },
  );

  it('refuses a missing name and unknown fields with 400 naming them', async () => {
    const api = httpClient(svc.controlUrl, svc.admin);
    const missing = await api.post('/api/v1/projects', { slug: 'nameless' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('name');
    const extra = await api.post('/api/v1/projects', { name: 'X', slug: 'extra', plan: 'gold' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('plan');
  });

  it('enforces FLAGOPS_PLAN_PROJECT_LIMIT with 403 plan_limit and commits nothing', async () => {
    const api = httpClient(svc.controlUrl, svc.admin);
    await createProject(api, 'second');
    await createProject(api, 'third');
    const before = commitCount(svc.gitdir());
    const res = await api.post('/api/v1/projects', { name: 'Fourth', slug: 'fourth' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('plan_limit');
    expect(res.body.error.message).toContain('3');
    expect(commitCount(svc.gitdir())).toBe(before);
  });
});
