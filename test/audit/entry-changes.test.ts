import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/** GET /api/v1/audit?include=changes: each entry says what its commit changed, in the words of `flagops diff`. */
describe('what each audit entry changed', () => {
  let svc: TestService;
  let admin: HttpClient;
  let flag: Json;

  const entries = async (query: string): Promise<Json[]> => {
    const res = await admin.get(`/api/v1/audit?${query}`);
    expect(res.status).toBe(200);
    return res.body.entries;
  };

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout-v2' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
      enabled: true,
      rolloutPct: 10,
      rules: [{ id: 'beta', serve: 'on', conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }] }],
    });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 });
    await httpClient(svc.controlUrl, svc.agent).post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'errors' });
    pushEdit(
      svc.gitdir(),
      (checkout) =>
        writeFileSync(
          path.join(checkout, 'projects/shop/environments/staging/checkout-v2.yaml'),
          'enabled: true\nrolloutPct: 5\nvalueOn: true\nvalueOff: false\nversion: 4\n',
        ),
      'staging at 5%',
    );
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
  });

  it('gives before → after for config updates, rules, kills and engineer pushes', async () => {
    // The push reaches the audit trail when the service sees main move (its watcher), a moment after it returns.
    await expect.poll(async () => (await entries(`flagId=${flag.id}`)).length, { timeout: 10_000 }).toBe(5);
    const list = await entries(`flagId=${flag.id}&include=changes`);
    const byAction = (action: string, env?: string) => list.filter((e) => e.action === action && (!env || e.environment === env));
    expect(byAction('kill')[0].changes).toEqual(['killed by ' + byAction('kill')[0].actor.keyPrefix + ' (errors)']);
    const updates = byAction('config_update', 'prod');
    expect(updates[0].changes).toEqual(['rolloutPct 10 → 50']);
    expect(updates[1].changes).toEqual(['enabled', 'rolloutPct 0 → 10', 'rule beta added']);
    const pushed = list.find((e) => e.environment === 'staging' && e.actor.type === 'git');
    expect(pushed.changes).toEqual(['enabled', 'rolloutPct 0 → 5']);
  });

  it('leaves the field out unless asked for, and refuses an unknown include', async () => {
    expect((await entries(`flagId=${flag.id}`))[0].changes).toBeUndefined();
    const bad = await admin.get('/api/v1/audit?include=diff');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^include: /);
  });

  it('filters by actor: a name or a key prefix, ignoring case', async () => {
    const agentPrefix = (await entries(`flagId=${flag.id}&action=kill`))[0].actor.keyPrefix;
    expect((await entries(`actor=${agentPrefix}`)).map((e) => e.action)).toEqual(['kill']);
    const byName = await entries(`actor=${encodeURIComponent('erin ENGINEER')}`);
    expect(byName.map((e) => [e.actor.name, e.environment])).toEqual([['Erin Engineer', 'staging']]);
    expect(await entries('actor=nobody')).toEqual([]);
  });
  it('says a flag whose file a push made invalid is held back, naming the file and line, not that it was deleted', async () => {
    const other = await createFlag(admin, (await admin.get('/api/v1/projects')).body.projects[0].id, { key: 'banner' });
    pushEdit(
      svc.gitdir(),
      (checkout) =>
        writeFileSync(
          path.join(checkout, 'projects/shop/environments/dev/banner.yaml'),
          'enabled: true\nrolloutPct: 150\nvalueOn: true\nvalueOff: false\nversion: 2\n',
        ),
      'banner at 150%',
    );
    const entry = await expect
      .poll(async () => (await entries(`flagId=${other.id}&include=changes`)).find((e) => e.message === 'banner at 150%'), {
        timeout: 10_000,
      })
      .toBeTruthy()
      .then(async () => (await entries(`flagId=${other.id}&include=changes`)).find((e) => e.message === 'banner at 150%'));
    expect(entry.changes).toEqual([
      expect.stringMatching(
        /^invalid file, held back \(its last valid state serves\): projects\/shop\/environments\/dev\/banner\.yaml:2:\d+: /,
      ),
    ]);
    expect(entry.changes.join(' ')).not.toContain('deleted');
    // The file made valid again: not "flag added", since the flag was there (held back) all along.
    pushEdit(
      svc.gitdir(),
      (checkout) =>
        writeFileSync(
          path.join(checkout, 'projects/shop/environments/dev/banner.yaml'),
          'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: 2\n',
        ),
      'banner at 100%',
    );
    await expect
      .poll(async () => (await entries(`flagId=${other.id}&include=changes`)).find((e) => e.message === 'banner at 100%')?.changes)
      .toEqual(['invalid file in the parent commit made valid: served as committed from here, not compared with the parent']);
  });
});
