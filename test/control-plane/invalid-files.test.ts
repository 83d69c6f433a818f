import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/deadlines.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject } from './fixtures.js';

// Contract §10: an invalid file on main holds back only the flag (or project) it belongs to, both APIs answer
// from the one served state, writes to what is held back are 409 invalid_in_repository, kills always work.

const configYaml = (fields: { enabled?: boolean; rolloutPct?: number | string; version?: number } = {}) =>
  `enabled: ${fields.enabled ?? true}\nrolloutPct: ${fields.rolloutPct ?? 100}\nvalueOn: true\nvalueOff: false\nversion: ${fields.version ?? 10}\nrules: []\n`;

interface World {
  svc: TestService;
  admin: () => HttpClient;
  shop: Json;
  other: Json;
  a: Json;
  b: Json;
  c: Json;
  evalShop: () => HttpClient;
  evalOther: () => HttpClient;
}

/** Projects shop (flags a, b) and other (flag c), all enabled at 100% in prod, and sdk keys for prod. */
async function world(): Promise<World> {
  const svc = await startTestService();
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const shop = await createProject(admin(), 'shop');
  const other = await createProject(admin(), 'other');
  const a = await createFlag(admin(), shop.id, { key: 'a' });
  const b = await createFlag(admin(), shop.id, { key: 'b' });
  const c = await createFlag(admin(), other.id, { key: 'c' });
  for (const flag of [a, b, c]) {
    const res = await admin().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    expect(res.status).toBe(200);
  }
  const shopKey = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: shop.id, environment: 'prod' })).body.key;
  const otherKey = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: other.id, environment: 'prod' })).body.key;
  return {
    svc,
    admin,
    shop,
    other,
    a,
    b,
    c,
    evalShop: () => httpClient(svc.evalUrl, shopKey),
    evalOther: () => httpClient(svc.evalUrl, otherKey),
  };
}

const served = async (client: HttpClient, key: string) => (await client.post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];

function push(svc: TestService, files: Record<string, string>, message = 'a push'): string {
  return pushEdit(
    svc.gitdir(),
    (checkout) => {
      for (const [file, text] of Object.entries(files)) writeFileSync(path.join(checkout, file), text);
    },
    message,
  );
}

/** /healthz with the details an admin key sees (its own organisation's). */
const health = async (url: string, admin: string) => {
  const res = await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${admin}` } });
  return { status: res.status, body: (await res.json()) as Json };
};

describe('an invalid environment config pushed for one flag', () => {
  let w: World;
  const broken = 'projects/shop/environments/prod/a.yaml';
  beforeAll(async () => {
    w = await world();
    push(w.svc, { [broken]: configYaml({ rolloutPct: 250, enabled: false }) }, 'a broken rollout');
    await until(
      () => health(w.svc.controlUrl, w.svc.admin),
      (h) => h.body.status === 'degraded',
    );
  });
  afterAll(() => w?.svc.stop());

  it('keeps serving the flag’s last valid state, and the control plane shows that same state naming file and line', async () => {
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: true, reason: 'default' });
    const flag = (await w.admin().get(`/api/v1/flags/${w.a.id}`)).body;
    expect(flag.environments.prod).toMatchObject({ enabled: true, rolloutPct: 100 });
    expect(flag.invalidFiles).toEqual([{ file: broken, line: 2, message: expect.stringContaining('rolloutPct') }]);
    const listed = (await w.admin().get(`/api/v1/projects/${w.shop.id}/flags`)).body.flags;
    expect(listed.find((f: Json) => f.key === 'a').invalidFiles[0].file).toBe(broken);
    expect(listed.find((f: Json) => f.key === 'b')).not.toHaveProperty('invalidFiles');
    const lookedUp = (await w.admin().get('/api/v1/flags/lookup?projectSlug=shop&key=a')).body;
    expect(lookedUp.environments.prod.rolloutPct).toBe(100);
    expect(lookedUp.invalidFiles[0].file).toBe(broken);
  });

  it('takes and serves an API change to another flag of the same project', async () => {
    const res = await w.admin().put(`/api/v1/flags/${w.b.id}/environments/prod/config`, { enabled: false });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('invalidFiles');
    expect(await served(w.evalShop(), 'b')).toMatchObject({ value: false, reason: 'flag_disabled' });
    const snapshot = (await w.evalShop().get('/v1/snapshot')).body;
    expect(snapshot.flags.b.enabled).toBe(false);
    expect(snapshot.flags.a).toMatchObject({ enabled: true, rolloutPct: 100 });
  });

  it('refuses an API write to the held-back flag with 409 invalid_in_repository naming the file, committing nothing', async () => {
    const gitdir = w.svc.gitdir();
    const before = commitCount(gitdir);
    for (const [method, url, body] of [
      ['PUT', `/api/v1/flags/${w.a.id}/environments/dev/config`, { rolloutPct: 5 }],
      ['POST', `/api/v1/flags/${w.a.id}/environments/staging/promote`, { fromEnv: 'dev' }],
      ['PATCH', `/api/v1/flags/${w.a.id}`, { name: 'Renamed' }],
      ['DELETE', `/api/v1/flags/${w.a.id}`, undefined],
    ] as const) {
      const res = await w.admin().request(method, url, body === undefined ? {} : { body });
      expect(res.status, `${method} ${url}`).toBe(409);
      expect(res.body.error.code).toBe('invalid_in_repository');
      expect(res.body.error.message).toContain(broken);
      expect(res.body.error.message).not.toContain(w.svc.dataDir);
    }
    expect(commitCount(gitdir)).toBe(before);
  });

  it('still kills the held-back flag, served before the call returns, and clears the kill', async () => {
    const kill = await w.admin().post(`/api/v1/flags/${w.a.id}/environments/prod/kill`);
    expect(kill.status).toBe(200);
    expect(kill.body.environments.prod.killed).toBe(true);
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: false, reason: 'killed' });
    const clear = await w.admin().put(`/api/v1/flags/${w.a.id}/environments/prod/config`, { clearKill: true });
    expect(clear.status).toBe(200);
    expect(clear.body.environments.prod.killed).toBe(false);
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: true });
  });

  it('reports the file on /healthz of both ports with 200 and status degraded', async () => {
    for (const url of [w.svc.controlUrl, w.svc.evalUrl]) {
      const { status, body } = await health(url, w.svc.admin);
      expect(status).toBe(200);
      expect(body.status).toBe('degraded');
      expect(body.organisations[0].invalidFiles).toEqual([{ file: broken, line: 2, message: expect.any(String) }]);
    }
  });

  it('shows a key limited to another project the degraded status, but not the file (it is not its project)', async () => {
    const limited = (await w.admin().post('/api/v1/keys', { kind: 'admin', name: 'other-only', projects: [w.other.id] })).body.key;
    const ownProject = (await w.admin().post('/api/v1/keys', { kind: 'admin', name: 'shop-only', projects: [w.shop.id] })).body.key;
    for (const url of [w.svc.controlUrl, w.svc.evalUrl]) {
      const other = await health(url, limited);
      expect(other.body.status).toBe('degraded');
      expect(other.body.organisations[0].invalidFiles).toEqual([]);
      expect((await health(url, ownProject)).body.organisations[0].invalidFiles).toEqual([
        { file: broken, line: 2, message: expect.any(String) },
      ]);
    }
  });

  it('serves the fixed file once a push repairs it, and clears invalidFiles and the degraded status', async () => {
    push(w.svc, { [broken]: configYaml({ rolloutPct: 0, enabled: true, version: 11 }) }, 'fix the rollout');
    await until(
      () => served(w.evalShop(), 'a'),
      (r) => r.value === false && r.reason === 'default',
    );
    const flag = (await w.admin().get(`/api/v1/flags/${w.a.id}`)).body;
    expect(flag.environments.prod.rolloutPct).toBe(0);
    expect(flag).not.toHaveProperty('invalidFiles');
    expect((await health(w.svc.evalUrl, w.svc.admin)).body.status).toBe('ok');
    expect((await health(w.svc.controlUrl, w.svc.admin)).body.organisations[0].invalidFiles).toEqual([]);
  });
});

describe('an invalid project.yaml', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
    push(w.svc, { 'projects/shop/project.yaml': 'id: prj_shop\nname: [unclosed\n' }, 'break the project');
    await until(
      () => health(w.svc.controlUrl, w.svc.admin),
      (h) => h.body.status === 'degraded',
    );
  });
  afterAll(() => w?.svc.stop());

  it('holds back only its project: it keeps serving, another project keeps taking changes', async () => {
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: true });
    const res = await w.admin().put(`/api/v1/flags/${w.c.id}/environments/prod/config`, { enabled: false });
    expect(res.status).toBe(200);
    expect(await served(w.evalOther(), 'c')).toMatchObject({ reason: 'flag_disabled' });
    const projects = (await w.admin().get('/api/v1/projects')).body.projects;
    expect(projects.map((p: Json) => p.slug).sort()).toEqual(['other', 'shop']);
    expect(projects.find((p: Json) => p.slug === 'shop').invalidFiles[0].file).toBe('projects/shop/project.yaml');
    expect(projects.find((p: Json) => p.slug === 'other')).not.toHaveProperty('invalidFiles');
    const listed = (await w.admin().get('/api/v1/invalid-files')).body;
    expect(listed.invalidFiles).toEqual([
      { file: 'projects/shop/project.yaml', line: 3, message: expect.stringMatching(/^YAML syntax error/) },
    ]);
  });

  it('marks every flag of the project and refuses writes to them and new flags in it', async () => {
    const listed = (await w.admin().get(`/api/v1/projects/${w.shop.id}/flags`)).body.flags;
    for (const flag of listed) expect(flag.invalidFiles[0].file).toBe('projects/shop/project.yaml');
    const before = commitCount(w.svc.gitdir());
    const write = await w.admin().put(`/api/v1/flags/${w.b.id}/environments/prod/config`, { rolloutPct: 50 });
    expect(write.status).toBe(409);
    expect(write.body.error).toMatchObject({
      code: 'invalid_in_repository',
      message: expect.stringContaining('projects/shop/project.yaml'),
    });
    const create = await w.admin().post(`/api/v1/projects/${w.shop.id}/flags`, { key: 'new-flag' });
    expect(create.status).toBe(409);
    expect(create.body.error.code).toBe('invalid_in_repository');
    expect(commitCount(w.svc.gitdir())).toBe(before);
  });

  it('still takes kills in the held-back project', async () => {
    const kill = await w.admin().post(`/api/v1/flags/${w.b.id}/environments/prod/kill`);
    expect(kill.status).toBe(200);
    expect(await served(w.evalShop(), 'b')).toMatchObject({ value: false, reason: 'killed' });
  });
});

describe('an invalid kills.yaml', () => {
  let w: World;
  const kills = 'projects/shop/environments/prod/kills.yaml';
  beforeAll(async () => {
    w = await world();
    expect((await w.admin().post(`/api/v1/flags/${w.a.id}/environments/prod/kill`)).status).toBe(200);
    push(w.svc, { [kills]: 'kills: [not, a, map]\n' }, 'break the kills');
    await until(
      () => health(w.svc.controlUrl, w.svc.admin),
      (h) => h.body.status === 'degraded',
    );
  });
  afterAll(() => w?.svc.stop());

  it('keeps the project’s last valid state, its kills included', async () => {
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: false, reason: 'killed' });
    expect(await served(w.evalShop(), 'b')).toMatchObject({ value: true });
    const flag = (await w.admin().get(`/api/v1/flags/${w.a.id}`)).body;
    expect(flag.environments.prod.killed).toBe(true);
    expect(flag.invalidFiles[0].file).toBe(kills);
  });

  it('kills another flag, rewriting kills.yaml from the last valid kills plus the change', async () => {
    const kill = await w.admin().post(`/api/v1/flags/${w.b.id}/environments/prod/kill`);
    expect(kill.status).toBe(200);
    expect(await served(w.evalShop(), 'b')).toMatchObject({ value: false, reason: 'killed' });
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: false, reason: 'killed' });
    // The rewritten file is valid again, so nothing is held back any more.
    await until(
      () => health(w.svc.evalUrl, w.svc.admin),
      (h) => h.body.status === 'ok',
    );
    expect((await w.admin().get(`/api/v1/flags/${w.b.id}`)).body).not.toHaveProperty('invalidFiles');
  });
});

describe('a restart with an invalid file still on main', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(() => w?.svc.stop());

  it('serves the last valid state, not nothing', async () => {
    push(w.svc, { 'projects/shop/environments/dev/a.yaml': 'enabled: maybe\n' }, 'a broken dev config');
    // Another valid change after the broken one, so the last valid state is not simply main's parent.
    push(w.svc, { 'projects/shop/environments/prod/b.yaml': configYaml({ rolloutPct: 0, version: 11 }) }, 'roll b back');
    await until(
      () => served(w.evalShop(), 'b'),
      (r) => r.value === false,
    );
    const before = (await w.admin().get(`/api/v1/flags/${w.a.id}`)).body;
    const etag = (await w.evalShop().get('/v1/snapshot')).headers.get('etag');

    await w.svc.restart();

    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: true, reason: 'default' });
    expect((await w.admin().get(`/api/v1/flags/${w.a.id}`)).body).toEqual(before);
    expect((await w.evalShop().get('/v1/snapshot')).headers.get('etag')).toBe(etag);
    expect((await health(w.svc.evalUrl, w.svc.admin)).body.status).toBe('degraded');
  });
});

describe('snapshot versions with a held-back flag', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(() => w?.svc.stop());

  const etag = async () => {
    const res = await w.evalShop().get('/v1/snapshot');
    return { etag: res.headers.get('etag'), version: res.body.version as number };
  };

  it('stays put for commits that touch only the held-back flag, and moves for any other change', async () => {
    const first = await etag();
    push(w.svc, { 'projects/shop/environments/prod/a.yaml': configYaml({ rolloutPct: 'lots' }) }, 'break a');
    await until(
      () => health(w.svc.evalUrl, w.svc.admin),
      (h) => h.body.status === 'degraded',
    );
    expect(await etag()).toEqual(first);
    const stillBroken = push(
      w.svc,
      {
        'projects/shop/environments/prod/a.yaml': configYaml({ rolloutPct: 'even more' }),
        'projects/shop/environments/dev/a.yaml': configYaml({ rolloutPct: 7 }),
      },
      'still broken',
    );
    await until(
      () => health(w.svc.evalUrl, w.svc.admin),
      (h) => h.body.organisations[0].commit === stillBroken,
    );
    expect(await etag()).toEqual(first);

    expect((await w.admin().put(`/api/v1/flags/${w.b.id}/environments/prod/config`, { rolloutPct: 40 })).status).toBe(200);
    const afterB = await etag();
    expect(afterB.version).toBeGreaterThan(first.version);

    // The fix makes a's current files served: its prod snapshot changes, and so does the version.
    push(w.svc, { 'projects/shop/environments/prod/a.yaml': configYaml({ rolloutPct: 60, version: 12 }) }, 'fix a');
    await until(
      () => served(w.evalShop(), 'a'),
      (r) => r.reason === 'rollout',
    );
    expect((await etag()).version).toBeGreaterThan(afterB.version);
  });
});

describe('a YAML alias bomb committed on main', () => {
  let w: World;
  const bombFile = 'projects/shop/environments/dev/a.yaml';
  // Nine levels of nine aliases each: a few hundred bytes that expand to 387 million values.
  const letters = 'abcdefghi';
  const bomb = [
    `a: &a [${Array(9).fill('"lol"').join(',')}]`,
    ...[...letters].slice(1).map((letter, i) => `${letter}: &${letter} [${Array(9).fill(`*${letters[i]}`).join(',')}]`),
    'enabled: true',
  ].join('\n');
  beforeAll(async () => {
    w = await world();
    push(w.svc, { [bombFile]: bomb }, 'an alias bomb');
    await until(
      () => health(w.svc.controlUrl, w.svc.admin),
      (h) => h.body.status === 'degraded',
    );
  });
  afterAll(() => w?.svc.stop());

  it('answers normally everywhere, kills included, and /healthz names the file', async () => {
    expect((await w.admin().get('/api/v1/projects')).status).toBe(200);
    expect((await w.admin().get(`/api/v1/projects/${w.shop.id}/flags`)).status).toBe(200);
    expect((await w.admin().get(`/api/v1/flags/${w.a.id}`)).body.invalidFiles[0].file).toBe(bombFile);
    expect(await served(w.evalShop(), 'a')).toMatchObject({ value: true });
    expect((await w.admin().post(`/api/v1/flags/${w.a.id}/environments/prod/kill`)).status).toBe(200);
    expect(await served(w.evalShop(), 'a')).toMatchObject({ reason: 'killed' });
    expect((await w.admin().put(`/api/v1/flags/${w.b.id}/environments/prod/config`, { rolloutPct: 0 })).status).toBe(200);
    const { status, body } = await health(w.svc.evalUrl, w.svc.admin);
    expect(status).toBe(200);
    expect(body.organisations[0].invalidFiles).toEqual([
      { file: bombFile, line: expect.any(Number), message: expect.stringMatching(/alias/i) },
    ]);
  });
});
