import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

describe('GET /api/v1/audit', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let shop: Json;
  let blog: Json;
  let checkout: Json;
  let banner: Json;
  let post: Json;
  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    shop = await createProject(admin, 'shop');
    blog = await createProject(admin, 'blog');
    checkout = await createFlag(admin, shop.id, { key: 'checkout' });
    banner = await createFlag(admin, shop.id, { key: 'banner' });
    post = await createFlag(admin, blog.id, { key: 'post' });
    await agent.post(`/api/v1/flags/${checkout.id}/environments/prod/kill`, { reason: 'errors' });
    await admin.post(`/api/v1/flags/${checkout.id}/environments/prod/promote`, { fromEnv: 'staging' });
    await agent.put(`/api/v1/flags/${banner.id}/environments/dev/config`, { enabled: true });
    await agent.post(`/api/v1/flags/${post.id}/environments/dev/kill`);
  });
  afterAll(() => svc.stop());

  it('answers every change newest first, a kill attributed to the agent key’s prefix', async () => {
    const res = await agent.get('/api/v1/audit');
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.entries.map((e: Json) => e.action)).toEqual([
      'kill',
      'config_update',
      'promote',
      'kill',
      'flag_create',
      'flag_create',
      'flag_create',
      'project_create',
      'project_create',
    ]);
    const kill = res.body.entries[3];
    expect(kill).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{40}$/),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      projectSlug: 'shop',
      flagKey: 'checkout',
      environment: 'prod',
      actor: { type: 'agent', keyPrefix: svc.agent.slice(0, 16) },
    });
    expect(res.body.entries[2]).toMatchObject({
      action: 'promote',
      environment: 'prod',
      fromEnvironment: 'staging',
      actor: { type: 'admin' },
    });
  });

  it('filters by projectId, flagId, environment and action', async () => {
    const byProject = (await agent.get(`/api/v1/audit?projectId=${blog.id}`)).body.entries;
    expect(byProject.map((e: Json) => e.action)).toEqual(['kill', 'flag_create', 'project_create']);
    const byFlag = (await agent.get(`/api/v1/audit?flagId=${checkout.id}`)).body.entries;
    expect(byFlag.map((e: Json) => e.action)).toEqual(['promote', 'kill', 'flag_create']);
    const byEnv = (await agent.get(`/api/v1/audit?environment=dev`)).body.entries;
    expect(byEnv.map((e: Json) => e.flagKey)).toEqual(['post', 'banner']);
    const kills = (await agent.get('/api/v1/audit?action=kill')).body.entries;
    expect(kills.map((e: Json) => e.flagKey)).toEqual(['post', 'checkout']);
    const mismatch = await agent.get(`/api/v1/audit?projectId=${blog.id}&flagId=${checkout.id}`);
    expect(mismatch.body).toEqual({ entries: [], nextCursor: null });
  });

  it('pages with limit and nextCursor, neither repeating nor skipping', async () => {
    const all = (await agent.get('/api/v1/audit')).body.entries.map((e: Json) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = (await agent.get(`/api/v1/audit?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      expect(page.entries.length).toBeLessThanOrEqual(4);
      seen.push(...page.entries.map((e: Json) => e.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(all);
  });

  it('refuses a bad limit, environment, action or cursor with 400 naming it', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['environment=qa', 'environment'],
      ['action=explode', 'action'],
      ['cursor=garbage', 'cursor'],
    ]) {
      const res = await agent.get(`/api/v1/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.message).toContain(field);
    }
    expect((await agent.get('/api/v1/audit?limit=500')).status).toBe(200);
  });

  it('answers 404 for a projectId or flagId the organisation does not have', async () => {
    expect((await agent.get('/api/v1/audit?projectId=prj_nope')).status).toBe(404);
    expect((await agent.get('/api/v1/audit?flagId=flg_nope')).status).toBe(404);
    const globex = httpClient(svc.controlUrl, svc.orgs.globex.admin);
    expect((await globex.get(`/api/v1/audit?flagId=${checkout.id}`)).status).toBe(404);
    expect((await globex.get('/api/v1/audit')).body.entries).toEqual([]);
  });
});

describe('the audit trail after a start on a damaged audit cache', () => {
  let svc: TestService;
  const logLines: string[] = [];
  afterAll(() => svc?.stop());

  it('answers what the commits say, not what a flipped bit in the cache says, and logs a warning', async () => {
    svc = await startTestService({ logger: createLogger({ level: 'warn', write: (line) => logLines.push(line) }) });
    const admin = httpClient(svc.controlUrl, svc.admin);
    const shop = await createProject(admin, 'shop');
    const flag = await createFlag(admin, shop.id, { key: 'm1234' });
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'errors' })).status).toBe(200);
    const before = (await admin.get('/api/v1/audit')).body.entries;
    await svc.service.stop();
    // One bit off in a flag key: still JSON, still a valid entry of its commit.
    const cacheFile = path.join(svc.dataDir, 'state', 'audit', 'acme.json');
    const cached = readFileSync(cacheFile, 'utf8');
    expect(cached).toContain('"flagKey":"m1234"');
    writeFileSync(cacheFile, cached.replaceAll('"flagKey":"m1234"', '"flagKey":"m1235"'));
    logLines.length = 0;
    await svc.restart();
    const after = await httpClient(svc.controlUrl, svc.admin).get('/api/v1/audit');
    expect(after.body.entries).toEqual(before);
    expect(after.body.entries.filter((e: Json) => e.flagKey === 'm1234')).toHaveLength(2);
    expect(logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('damaged audit index cache'), org: 'acme' }),
    );
  });
});
