import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject, headTrailer } from './fixtures.js';

describe('flags', () => {
  let svc: TestService;
  let api: HttpClient;
  let project: Json;
  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(api, 'shop');
  });
  afterAll(() => svc.stop());

  describe('creating a flag', () => {
    it('answers 201 with the flag, off at 0% in every environment, version 1', async () => {
      const res = await api.post(`/api/v1/projects/${project.id}/flags`, {
        key: 'checkout-v2',
        name: 'Checkout v2',
        description: 'new checkout',
      });
      expect(res.status).toBe(201);
      const config = {
        enabled: false,
        rolloutPct: 0,
        valueOn: true,
        valueOff: false,
        version: 1,
        rules: [],
        killed: false,
        schedule: [],
        nextStep: null,
      };
      expect(res.body).toEqual({
        id: expect.stringMatching(/^flg_/),
        key: 'checkout-v2',
        name: 'Checkout v2',
        description: 'new checkout',
        kind: 'boolean',
        defaultValue: false,
        archivedAt: null,
        projectId: project.id,
        projectSlug: 'shop',
        environments: { dev: config, staging: config, prod: config },
      });
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('flag_create');
      expect(headTrailer(svc.gitdir(), 'Flagops-Flag')).toBe('checkout-v2');
    });

    it.each([
      ['string', 'blue', 'blue', 'blue'],
      ['string', undefined, '', ''],
      ['number', 3, 3, 3],
      ['number', undefined, 0, 0],
      ['json', { a: 1 }, { a: 1 }, { a: 1 }],
      ['json', undefined, null, null],
    ])('a %s flag with defaultValue %j serves valueOn = valueOff = %j', async (kind, defaultValue, on, off) => {
      const key = `k-${kind}-${defaultValue === undefined ? 'none' : 'given'}`;
      const flag = await createFlag(api, project.id, { key, kind, ...(defaultValue === undefined ? {} : { defaultValue }) });
      expect(flag.kind).toBe(kind);
      expect(flag.defaultValue).toEqual(on);
      expect(flag.environments.prod).toMatchObject({ valueOn: on, valueOff: off, enabled: false, rolloutPct: 0 });
    });

    it('shows a flag without a name by its key', async () => {
      const flag = await createFlag(api, project.id, { key: 'unnamed' });
      expect(flag.name).toBe('unnamed');
      expect(flag.description).toBe('');
    });

    it('refuses a duplicate key, also one differing only in case, with 409 conflict', async () => {
      for (const key of ['checkout-v2', 'Checkout-V2']) {
        const res = await api.post(`/api/v1/projects/${project.id}/flags`, { key });
        expect(res.status, key).toBe(409);
        expect(res.body.error.code).toBe('conflict');
      }
    });

    it('refuses a defaultValue of another kind, a bad key and unknown fields with 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ key: 'typed', kind: 'number', defaultValue: 'three' }, 'defaultValue'],
        [{ key: 'bad key' }, 'key'],
        [{ key: 'kills' }, 'key'],
        [{ key: 'x', kind: 'enum' }, 'kind'],
        [{ key: 'x', enabled: true }, 'enabled'],
        [{ name: 'no key' }, 'key'],
      ];
      for (const [body, field] of cases) {
        const res = await api.post(`/api/v1/projects/${project.id}/flags`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message).toContain(field);
      }
    });

    it('answers 404 for an unknown project', async () => {
      const res = await api.post('/api/v1/projects/prj_nope/flags', { key: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });
  });

  describe('reading flags', () => {
    it('lists a project’s flags, or the one named by ?key', async () => {
      const all = await api.get(`/api/v1/projects/${project.id}/flags`);
      expect(all.status).toBe(200);
      expect(all.body.flags.map((f: Json) => f.key)).toContain('checkout-v2');
      const one = await api.get(`/api/v1/projects/${project.id}/flags?key=checkout-v2`);
      expect(one.body.flags).toHaveLength(1);
      expect(one.body.flags[0].key).toBe('checkout-v2');
      const none = await api.get(`/api/v1/projects/${project.id}/flags?key=missing`);
      expect(none.body).toEqual({ flags: [] });
      expect((await api.get('/api/v1/projects/prj_nope/flags')).status).toBe(404);
    });

    it('gets one flag by id, and 404 for an unknown id', async () => {
      const listed = (await api.get(`/api/v1/projects/${project.id}/flags?key=checkout-v2`)).body.flags[0];
      const res = await api.get(`/api/v1/flags/${listed.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(listed);
      expect((await api.get('/api/v1/flags/flg_nope')).status).toBe(404);
    });

    it('looks a flag up by project slug and key (the MCP server’s way in)', async () => {
      const res = await api.get('/api/v1/flags/lookup?projectSlug=shop&key=checkout-v2');
      expect(res.status).toBe(200);
      expect(res.body.key).toBe('checkout-v2');
      expect(res.body.projectSlug).toBe('shop');
      expect((await api.get('/api/v1/flags/lookup?projectSlug=shop&key=nope')).status).toBe(404);
      expect((await api.get('/api/v1/flags/lookup?projectSlug=nope&key=checkout-v2')).status).toBe(404);
    });

    it('answers a flag key where the path takes an id with 404 naming the lookup that finds the id', async () => {
      const kill = await api.post('/api/v1/flags/checkout-v2/environments/prod/kill', {});
      expect(kill.status).toBe(404);
      expect(kill.body.error).toEqual({
        code: 'not_found',
        message:
          'flag "checkout-v2" not found: this path takes a flag\'s id, and "checkout-v2" is the key of a flag in project "shop"; ' +
          'GET /api/v1/flags/lookup?projectSlug=shop&key=checkout-v2 answers it with its id',
      });
      // A key no project has: the same hint, with the slug left to the caller.
      expect((await api.get('/api/v1/flags/no-such-key')).body.error.message).toBe(
        'flag "no-such-key" not found: this path takes a flag\'s id (flg_…), not its key; ' +
          'GET /api/v1/flags/lookup?projectSlug=<slug>&key=no-such-key answers a flag with its id',
      );
      // Something shaped like an id is just not there.
      expect((await api.get('/api/v1/flags/flg_nope')).body.error.message).toBe('flag "flg_nope" not found');
    });

    it('refuses a lookup without projectSlug or key with 400 naming the parameter', async () => {
      for (const [query, missing] of [
        ['key=checkout-v2', 'projectSlug'],
        ['projectSlug=shop', 'key'],
        ['projectSlug=shop&key=', 'key'],
      ]) {
        const res = await api.get(`/api/v1/flags/lookup?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.body.error.message).toContain(missing);
      }
    });
  });

  describe('changing metadata (PATCH)', () => {
    it('changes name and description in one commit and answers the updated flag', async () => {
      const flag = await createFlag(api, project.id, { key: 'patched' });
      const res = await api.patch(`/api/v1/flags/${flag.id}`, { name: 'Patched', description: 'now described' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: flag.id, name: 'Patched', description: 'now described' });
      expect(res.body.environments).toEqual(flag.environments);
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('flag_update');
    });

    it('makes no commit when nothing changes', async () => {
      const flag = await createFlag(api, project.id, { key: 'same', name: 'Same' });
      const before = commitCount(svc.gitdir());
      const res = await api.patch(`/api/v1/flags/${flag.id}`, { name: 'Same' });
      expect(res.status).toBe(200);
      expect(commitCount(svc.gitdir())).toBe(before);
    });

    it('refuses anything but name and description with 400 naming the field', async () => {
      const flag = (await api.get('/api/v1/flags/lookup?projectSlug=shop&key=patched')).body;
      for (const field of ['kind', 'key', 'enabled', 'defaultValue']) {
        const res = await api.patch(`/api/v1/flags/${flag.id}`, { [field]: 'x' });
        expect(res.status, field).toBe(400);
        expect(res.body.error.message).toContain(field);
      }
      const empty = await api.patch(`/api/v1/flags/${flag.id}`, { name: '' });
      expect(empty.status).toBe(400);
      expect(empty.body.error.message).toContain('name');
    });
  });

  describe('archiving (DELETE)', () => {
    it('answers 200 with the whole flag, archivedAt set, and keeps it listed', async () => {
      const flag = await createFlag(api, project.id, { key: 'old-banner' });
      const res = await api.delete(`/api/v1/flags/${flag.id}`);
      expect(res.status).toBe(200);
      expect(res.body.archivedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(res.body.environments).toEqual(flag.environments);
      expect(headTrailer(svc.gitdir(), 'Flagops-Action')).toBe('flag_archive');
      expect((await api.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toBe(res.body.archivedAt);
    });

    it('archiving an archived flag is harmless: same archivedAt, no commit', async () => {
      const flag = (await api.get('/api/v1/flags/lookup?projectSlug=shop&key=old-banner')).body;
      const before = commitCount(svc.gitdir());
      const res = await api.delete(`/api/v1/flags/${flag.id}`);
      expect(res.status).toBe(200);
      expect(res.body.archivedAt).toBe(flag.archivedAt);
      expect(commitCount(svc.gitdir())).toBe(before);
    });

    it('answers 404 for an unknown flag', async () => {
      expect((await api.delete('/api/v1/flags/flg_nope')).status).toBe(404);
    });
  });
});
