import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, committedFile, createFlag, createProject, headTrailer, mainHead } from './fixtures.js';

describe('flag lifecycle data (type, owner, expiry)', () => {
  let svc: TestService;
  let api: HttpClient;
  let agent: HttpClient;
  let project: Json;
  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    project = await createProject(api, 'shop');
  });
  afterAll(() => svc.stop());

  const patch = (flag: Json, body: unknown) => api.patch(`/api/v1/flags/${flag.id}`, body);

  describe('creating a flag with a lifecycle', () => {
    it('stores it in the flag file and shows it in the answer, type release when left out', async () => {
      const res = await api.post(`/api/v1/projects/${project.id}/flags`, {
        key: 'checkout-v2',
        lifecycle: { type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' },
      });
      expect(res.status).toBe(201);
      expect(res.body.lifecycle).toEqual({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' });
      expect(committedFile(svc.gitdir(), 'projects/shop/flags/checkout-v2.yaml')).toContain(
        'lifecycle:\n  type: experiment\n  owner: team-checkout\n  expiresAt: 2027-03-31',
      );
      const owned = await createFlag(api, project.id, { key: 'owned', lifecycle: { owner: 'team-search' } });
      expect(owned.lifecycle).toEqual({ type: 'release', owner: 'team-search' });
      // Read back by every way in: by id, by key, in the list.
      expect((await api.get(`/api/v1/flags/${owned.id}`)).body.lifecycle).toEqual({ type: 'release', owner: 'team-search' });
      const listed = (await api.get(`/api/v1/projects/${project.id}/flags?key=checkout-v2`)).body.flags;
      expect(listed[0].lifecycle.type).toBe('experiment');
    });

    it('leaves lifecycle out of the flag and its file when none is given', async () => {
      const flag = await createFlag(api, project.id, { key: 'plain' });
      expect(flag).not.toHaveProperty('lifecycle');
      expect(committedFile(svc.gitdir(), 'projects/shop/flags/plain.yaml')).not.toContain('lifecycle');
    });

    it('refuses a bad type, an impossible or loose date, an empty owner and an unknown field with 400 naming it, creating nothing', async () => {
      const before = commitCount(svc.gitdir());
      const cases: Array<[unknown, string]> = [
        [{ type: 'temporary' }, 'lifecycle.type'],
        [{ expiresAt: '2027-02-30' }, 'lifecycle.expiresAt'],
        [{ expiresAt: 'next week' }, 'lifecycle.expiresAt'],
        [{ expiresAt: '2027-03-31 12:00' }, 'lifecycle.expiresAt'],
        [{ owner: '' }, 'lifecycle.owner'],
        [{ expires: '2027-03-31' }, 'lifecycle.expires'],
        ['experiment', 'lifecycle'],
      ];
      for (const [lifecycle, field] of cases) {
        const res = await api.post(`/api/v1/projects/${project.id}/flags`, { key: 'refused', lifecycle });
        expect(res.status, JSON.stringify(lifecycle)).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message, JSON.stringify(lifecycle)).toContain(field);
      }
      expect(commitCount(svc.gitdir())).toBe(before);
      expect((await api.get('/api/v1/flags/lookup?projectSlug=shop&key=refused')).status).toBe(404);
    });
  });

  describe('changing it (PATCH)', () => {
    it('sets a lifecycle on a flag without one, in one flag_update commit that says what changed', async () => {
      const flag = await createFlag(api, project.id, { key: 'banner' });
      const res = await patch(flag, { lifecycle: { type: 'release', owner: 'team-web', expiresAt: '2027-06-30T12:00:00Z' } });
      expect(res.status).toBe(200);
      expect(res.body.lifecycle).toEqual({ type: 'release', owner: 'team-web', expiresAt: '2027-06-30T12:00:00Z' });
      expect(res.body.environments).toEqual(flag.environments);
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('flag_update');
      const audit = await api.get(`/api/v1/audit?flagId=${flag.id}&limit=1&include=changes`);
      expect(audit.body.entries[0].changes).toEqual(['lifecycle set: type release, owner team-web, expires 2027-06-30T12:00:00Z']);
    });

    it('merges: fields left out keep their value, a field set to null goes', async () => {
      const flag = await createFlag(api, project.id, {
        key: 'merge',
        lifecycle: { type: 'experiment', owner: 'team-a', expiresAt: '2027-03-31' },
      });
      const typed = await patch(flag, { lifecycle: { type: 'release' } });
      expect(typed.body.lifecycle).toEqual({ type: 'release', owner: 'team-a', expiresAt: '2027-03-31' });
      const audit = await api.get(`/api/v1/audit?flagId=${flag.id}&limit=1&include=changes`);
      expect(audit.body.entries[0].changes).toEqual(['type experiment → release']);
      const moved = await patch(flag, { lifecycle: { owner: 'team-b', expiresAt: null } });
      expect(moved.body.lifecycle).toEqual({ type: 'release', owner: 'team-b' });
      expect(committedFile(svc.gitdir(), 'projects/shop/flags/merge.yaml')).toMatch(/lifecycle:\n {2}type: release\n {2}owner: team-b$/);
      // name and lifecycle in one request: one commit.
      const before = commitCount(svc.gitdir());
      const both = await patch(flag, { name: 'Merged', lifecycle: { type: 'permission' } });
      expect(both.body).toMatchObject({ name: 'Merged', lifecycle: { type: 'permission', owner: 'team-b' } });
      expect(commitCount(svc.gitdir())).toBe(before + 1);
    });

    it('removes the lifecycle with lifecycle: null, from the answer and the file', async () => {
      const flag = await createFlag(api, project.id, { key: 'removed', lifecycle: { type: 'kill-switch', owner: 'sre' } });
      const res = await patch(flag, { lifecycle: null });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('lifecycle');
      expect(committedFile(svc.gitdir(), 'projects/shop/flags/removed.yaml')).not.toContain('lifecycle');
      const audit = await api.get(`/api/v1/audit?flagId=${flag.id}&limit=1&include=changes`);
      expect(audit.body.entries[0].changes).toEqual(['lifecycle removed (was type kill-switch, owner sre)']);
    });

    it('makes no commit when the lifecycle is already what is sent, or null on a flag without one', async () => {
      const flag = await createFlag(api, project.id, { key: 'steady', lifecycle: { type: 'operational', owner: 'ops' } });
      const plain = await createFlag(api, project.id, { key: 'steady-plain' });
      const before = mainHead(svc.gitdir());
      expect((await patch(flag, { lifecycle: { type: 'operational', owner: 'ops' } })).status).toBe(200);
      expect((await patch(flag, { lifecycle: { owner: 'ops' } })).status).toBe(200);
      expect((await patch(plain, { lifecycle: null })).status).toBe(200);
      expect(mainHead(svc.gitdir())).toBe(before);
    });

    it('refuses bad lifecycle data with 400 naming the field, and changes nothing', async () => {
      const flag = await createFlag(api, project.id, { key: 'guarded', lifecycle: { type: 'experiment', owner: 'team-a' } });
      const before = mainHead(svc.gitdir());
      const cases: Array<[unknown, string]> = [
        [{ type: 'temporary' }, 'lifecycle.type'],
        [{ type: null }, 'lifecycle.type'],
        [{ expiresAt: '31.03.2027' }, 'lifecycle.expiresAt'],
        [{ owner: 42 }, 'lifecycle.owner'],
        [{ stale: true }, 'lifecycle.stale'],
        [[], 'lifecycle'],
      ];
      for (const [lifecycle, field] of cases) {
        const res = await patch(flag, { name: 'Never', lifecycle });
        expect(res.status, JSON.stringify(lifecycle)).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message, JSON.stringify(lifecycle)).toContain(field);
      }
      expect(mainHead(svc.gitdir())).toBe(before);
      expect((await api.get(`/api/v1/flags/${flag.id}`)).body).toMatchObject({
        name: 'guarded',
        lifecycle: { type: 'experiment', owner: 'team-a' },
      });
    });

    it('is open to agent keys like the rest of the metadata', async () => {
      const flag = await createFlag(api, project.id, { key: 'by-agent' });
      const res = await agent.patch(`/api/v1/flags/${flag.id}`, { lifecycle: { type: 'experiment', expiresAt: '2027-01-31' } });
      expect(res.status).toBe(200);
      expect(res.body.lifecycle).toEqual({ type: 'experiment', expiresAt: '2027-01-31' });
      const created = await agent.post(`/api/v1/projects/${project.id}/flags`, { key: 'agent-made', lifecycle: { owner: 'bot' } });
      expect(created.status).toBe(201);
      expect(created.body.lifecycle).toEqual({ type: 'release', owner: 'bot' });
    });
  });
});
