import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SignedIn, sessionHeaders, signIn } from '../dashboard/helpers/dashboard-session.js';
import { type HttpClient, type HttpResponse, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

/**
 * Every route of the control plane against every kind of limited credential (docs/credentials.md, "Roles" and
 * "Scoped keys"): keys limited to a project or an environment, and a session of each role, one of them limited
 * to a project. Two projects: `shop` (inside every project limit) and `web` (outside them).
 */
const COLUMNS = ['admin', 'admin@shop', 'agent@shop', 'agent:dev', 'session', 'editor', 'viewer', 'editor@shop'] as const;
type Column = (typeof COLUMNS)[number];
type Statuses = [number, number, number, number, number, number, number, number];

interface Row {
  name: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  expected: Statuses;
}

describe('the authorization matrix of limited keys and roles', () => {
  let svc: TestService;
  let admin: HttpClient;
  let clients: Record<Column, HttpClient>;
  let shop: Json;
  let web: Json;
  let shopFlag: Json;
  let webFlag: Json;
  const archivable: string[] = [];
  let n = 0;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    shop = await createProject(admin, 'shop');
    web = await createProject(admin, 'web');
    shopFlag = await createFlag(admin, shop.id, { key: 'checkout' });
    webFlag = await createFlag(admin, web.id, { key: 'banner' });
    for (let i = 0; i < COLUMNS.length; i++) archivable.push((await createFlag(admin, shop.id, { key: `old-${i}` })).id);
    const key = async (body: Json) => {
      const res = await admin.post('/api/v1/keys', body);
      if (res.status !== 201) throw new Error(`key ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.key as string;
    };
    const session = async (username: string, role?: string) => {
      const res = await admin.post('/api/v1/users', {
        username,
        name: username,
        password: `${username}-password-1`,
        ...(role ? { role } : {}),
      });
      if (res.status !== 201) throw new Error(`user ${username}: ${res.status} ${JSON.stringify(res.body)}`);
      return sessionClient(svc.controlUrl, await signIn(svc.controlUrl, username));
    };
    clients = {
      admin,
      'admin@shop': httpClient(svc.controlUrl, await key({ kind: 'admin', name: 'shop admin', projects: [shop.id] })),
      'agent@shop': httpClient(svc.controlUrl, await key({ kind: 'agent', name: 'shop agent', projects: [shop.id] })),
      'agent:dev': httpClient(svc.controlUrl, await key({ kind: 'agent', name: 'dev agent', environments: ['dev'] })),
      session: await session('ada'),
      editor: await session('eddie', 'editor'),
      viewer: await session('vera', 'viewer'),
      'editor@shop': await session('shelly', 'editor@shop'),
    };
  });
  afterAll(() => svc.stop());

  const flag =
    (f: () => Json, rest = '') =>
    () =>
      `/api/v1/flags/${f().id}${rest}`;
  //                                                   admin adm@s agt@s agt:d sess  edit  view  edit@s
  const rows: Row[] = [
    { name: 'list projects', method: 'GET', path: () => '/api/v1/projects', expected: [200, 200, 200, 200, 200, 200, 200, 200] },
    {
      name: 'read project in scope',
      method: 'GET',
      path: () => `/api/v1/projects/${shop.id}`,
      expected: [200, 200, 200, 200, 200, 200, 200, 200],
    },
    {
      name: 'read project outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'create project',
      method: 'POST',
      path: () => '/api/v1/projects',
      body: () => ({ name: 'P', slug: `p-${++n}` }),
      expected: [201, 403, 403, 403, 201, 403, 403, 403],
    },
    {
      name: 'project settings',
      method: 'PATCH',
      path: () => `/api/v1/projects/${shop.id}`,
      body: () => ({ name: `Shop ${++n}` }),
      expected: [200, 200, 403, 403, 200, 403, 403, 403],
    },
    {
      name: 'create flag in scope',
      method: 'POST',
      path: () => `/api/v1/projects/${shop.id}/flags`,
      body: () => ({ key: `f-${++n}` }),
      expected: [201, 201, 201, 201, 201, 201, 403, 201],
    },
    {
      name: 'create flag outside',
      method: 'POST',
      path: () => `/api/v1/projects/${web.id}/flags`,
      body: () => ({ key: `f-${++n}` }),
      expected: [201, 404, 404, 201, 201, 201, 403, 404],
    },
    {
      name: 'list flags outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}/flags`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    { name: 'read flag outside', method: 'GET', path: flag(() => webFlag), expected: [200, 404, 404, 200, 200, 200, 200, 404] },
    {
      name: 'look up flag outside',
      method: 'GET',
      path: () => '/api/v1/flags/lookup?projectSlug=web&key=banner',
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'flag metadata',
      method: 'PATCH',
      path: flag(() => shopFlag),
      body: () => ({ name: `name ${++n}` }),
      expected: [200, 200, 200, 403, 200, 200, 403, 200],
    },
    {
      name: 'config in dev',
      method: 'PUT',
      path: flag(() => shopFlag, '/environments/dev/config'),
      body: () => ({ rolloutPct: ++n % 100 }),
      expected: [200, 200, 200, 200, 200, 200, 403, 200],
    },
    {
      name: 'config in prod',
      method: 'PUT',
      path: flag(() => shopFlag, '/environments/prod/config'),
      body: () => ({ rolloutPct: ++n % 100 }),
      expected: [200, 200, 200, 403, 200, 200, 403, 200],
    },
    {
      name: 'config outside',
      method: 'PUT',
      path: flag(() => webFlag, '/environments/dev/config'),
      body: () => ({ rolloutPct: ++n % 100 }),
      expected: [200, 404, 404, 200, 200, 200, 403, 404],
    },
    {
      name: 'kill in prod',
      method: 'POST',
      path: flag(() => shopFlag, '/environments/prod/kill'),
      expected: [200, 200, 200, 403, 200, 200, 403, 200],
    },
    {
      name: 'clear kill in prod',
      method: 'PUT',
      path: flag(() => shopFlag, '/environments/prod/config'),
      body: () => ({ clearKill: true }),
      expected: [200, 200, 200, 403, 200, 200, 403, 200],
    },
    {
      name: 'kill outside',
      method: 'POST',
      path: flag(() => webFlag, '/environments/dev/kill'),
      expected: [200, 404, 404, 200, 200, 200, 403, 404],
    },
    {
      name: 'promote into staging',
      method: 'POST',
      path: flag(() => shopFlag, '/environments/staging/promote'),
      body: () => ({ fromEnv: 'dev' }),
      expected: [200, 200, 200, 403, 200, 200, 403, 200],
    },
    {
      name: 'promote into prod',
      method: 'POST',
      path: flag(() => shopFlag, '/environments/prod/promote'),
      body: () => ({ fromEnv: 'staging' }),
      expected: [200, 200, 403, 403, 200, 403, 403, 403],
    },
    {
      name: 'archive flag',
      method: 'DELETE',
      path: () => `/api/v1/flags/${archivable.pop()}`,
      expected: [200, 200, 403, 403, 200, 403, 403, 403],
    },
    {
      name: 'segment',
      method: 'PUT',
      path: () => `/api/v1/projects/${shop.id}/segments/s-${++n}`,
      body: () => ({ name: 'S', userIds: ['a'] }),
      expected: [201, 201, 201, 403, 201, 201, 403, 201],
    },
    {
      name: 'segments outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}/segments`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'stats outside',
      method: 'GET',
      path: flag(() => webFlag, '/environments/dev/stats?period=24h'),
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'events outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}/events?period=24h`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'budgets outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}/budgets`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'flag health outside',
      method: 'GET',
      path: () => `/api/v1/projects/${web.id}/flags/health`,
      expected: [200, 404, 404, 200, 200, 200, 200, 404],
    },
    {
      name: 'create trigger',
      method: 'POST',
      path: flag(() => shopFlag, '/environments/dev/triggers'),
      body: () => ({ name: `t-${++n}` }),
      expected: [201, 201, 403, 403, 201, 403, 403, 403],
    },
    { name: 'webhooks', method: 'GET', path: () => '/api/v1/webhooks', expected: [200, 403, 403, 403, 200, 403, 403, 403] },
    { name: 'list keys', method: 'GET', path: () => '/api/v1/keys', expected: [200, 200, 403, 403, 403, 403, 403, 403] },
    {
      name: 'create key outside',
      method: 'POST',
      path: () => '/api/v1/keys',
      body: () => ({ kind: 'agent', projects: [web.id] }),
      expected: [201, 404, 403, 403, 403, 403, 403, 403],
    },
    { name: 'users', method: 'GET', path: () => '/api/v1/users', expected: [200, 403, 403, 403, 403, 403, 403, 403] },
    { name: 'audit', method: 'GET', path: () => '/api/v1/audit', expected: [200, 200, 200, 200, 200, 200, 200, 200] },
    { name: 'proposals', method: 'GET', path: () => '/api/v1/proposals', expected: [200, 200, 200, 200, 200, 200, 200, 200] },
    { name: 'invalid files', method: 'GET', path: () => '/api/v1/invalid-files', expected: [200, 200, 200, 200, 200, 200, 200, 200] },
  ];

  it('every limited credential × every route answers as docs/credentials.md says, with the error body', async () => {
    const mismatches: string[] = [];
    for (const row of rows) {
      for (const [i, column] of COLUMNS.entries()) {
        const expected = row.expected[i];
        const res = await clients[column].request(row.method, row.path(), { body: row.body?.() });
        const code = { 403: 'forbidden', 404: 'not_found' }[expected as 403 | 404];
        if (res.status !== expected)
          mismatches.push(`${row.name} with ${column}: ${res.status} (expected ${expected}) ${JSON.stringify(res.body)}`);
        else if (code && res.body?.error?.code !== code) mismatches.push(`${row.name} with ${column}: body ${JSON.stringify(res.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('lists leave out what is outside a project limit: projects, audit entries, proposals, keys', async () => {
    for (const column of ['admin@shop', 'agent@shop', 'editor@shop'] as const) {
      const projects = (await clients[column].get('/api/v1/projects')).body.projects.map((p: Json) => p.slug);
      expect(projects, column).toEqual(['shop']);
      const audit = (await clients[column].get('/api/v1/audit?limit=500')).body.entries as Json[];
      expect(audit.length, column).toBeGreaterThan(0);
      expect(new Set(audit.map((e) => e.projectSlug)), column).toEqual(new Set(['shop']));
    }
    // Unlimited credentials see both.
    expect((await clients.viewer.get('/api/v1/projects')).body.projects.map((p: Json) => p.slug)).toEqual(
      expect.arrayContaining(['shop', 'web']),
    );
    const keys = (await clients['admin@shop'].get('/api/v1/keys')).body.keys as Json[];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key.projects ?? [key.projectId], key.name).toEqual([shop.id]);
  });

  it('the key names the dashboard shows beside audit entries leave out keys of other projects only', async () => {
    const webKey = (await admin.post('/api/v1/keys', { kind: 'agent', name: 'web only', projects: [web.id] })).body;
    const shopKey = (await admin.post('/api/v1/keys', { kind: 'agent', name: 'shop only', projects: [shop.id] })).body;
    const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', name: 'shop app', projectId: shop.id, environment: 'prod' })).body;
    const names = async (column: Column) =>
      ((await clients[column].get('/dashboard/api/key-names')).body.keys as Json[]).map((k) => k.prefix as string);
    const limited = await names('editor@shop');
    expect(limited).toContain(shopKey.prefix);
    expect(limited).toContain(svc.admin.slice(0, 16));
    expect(limited).not.toContain(webKey.prefix);
    expect(await names('editor')).toContain(webKey.prefix);
    // An SDK key changes nothing, so nothing the dashboard shows names it.
    expect(await names('editor')).not.toContain(sdkKey.prefix);
  });

  it('a proposal of a project outside the limit is not found, and not listed', async () => {
    await admin.patch(`/api/v1/projects/${web.id}`, { requireApproval: { prod: ['agent'] } });
    const proposed = await httpClient(svc.controlUrl, svc.agent).put(`/api/v1/flags/${webFlag.id}/environments/prod/config`, {
      rolloutPct: 7,
    });
    expect(proposed.status).toBe(202);
    const id = proposed.body.proposal.id;
    expect((await admin.get(`/api/v1/proposals/${id}`)).status).toBe(200);
    expect((await clients['admin@shop'].get(`/api/v1/proposals/${id}`)).status).toBe(404);
    expect((await clients['admin@shop'].post(`/api/v1/proposals/${id}/reject`)).status).toBe(404);
    expect((await clients['admin@shop'].get('/api/v1/proposals')).body.proposals).toEqual([]);
    expect((await clients['editor@shop'].get('/api/v1/proposals')).body.proposals).toEqual([]);
  });

  it('a trigger of a project outside the limit is not found; one of an environment outside it is forbidden', async () => {
    const onWeb = await admin.post(`/api/v1/flags/${webFlag.id}/environments/dev/triggers`, { name: 'web' });
    const onProd = await admin.post(`/api/v1/flags/${shopFlag.id}/environments/prod/triggers`, { name: 'prod' });
    const devAdmin = httpClient(
      svc.controlUrl,
      (await admin.post('/api/v1/keys', { kind: 'admin', name: 'dev admin', environments: ['dev'] })).body.key,
    );
    expect((await clients['admin@shop'].delete(`/api/v1/triggers/${onWeb.body.id}`)).status).toBe(404);
    const refused = await devAdmin.delete(`/api/v1/triggers/${onProd.body.id}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('limited to environment dev');
    expect((await clients['admin@shop'].delete(`/api/v1/triggers/${onProd.body.id}`)).status).toBe(200);
  });

  it("the audit trail shows a session's role with its change", async () => {
    const res = await clients['editor@shop'].put(`/api/v1/flags/${shopFlag.id}/environments/dev/config`, { rolloutPct: 42 });
    expect(res.status).toBe(200);
    const entries = (await admin.get('/api/v1/audit?limit=1')).body.entries as Json[];
    expect(entries[0].actor).toEqual({ type: 'session', name: 'shelly', role: 'editor@shop' });
    const byKey = (await admin.get('/api/v1/audit?limit=500')).body.entries.find((e: Json) => e.actor.type === 'admin');
    expect(byKey.actor.role).toBeUndefined();
  });

  it('the session answer tells the page the role and what it may do, so it offers only those controls', async () => {
    const viewer = await signIn(svc.controlUrl, 'vera');
    const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, { headers: sessionHeaders(svc.controlUrl, viewer) });
    const body = (await res.json()) as Json;
    expect(body.role).toBe('viewer');
    expect(body.permissions).toEqual(['read', 'audit.read', 'stats.read']);
    expect(body.promoteInto).toEqual([]);
    const editor = await signIn(svc.controlUrl, 'eddie');
    const editorBody = (await (
      await fetch(`${svc.controlUrl}/dashboard/api/session`, { headers: sessionHeaders(svc.controlUrl, editor) })
    ).json()) as Json;
    expect(editorBody.permissions).toContain('kill');
    expect(editorBody.permissions).not.toContain('flag.archive');
    expect(editorBody.promoteInto).toEqual(['dev', 'staging']);
  });
});

/**
 * Where every change of agent keys and sessions waits for approval: a proposal is a change too, so a credential
 * that may not make a change may not propose it either. A viewer's every change is 403, in any project (the
 * role is refused before anything is looked up); an editor limited to projects finds nothing of another project
 * to propose a change to (404); an editor's and an agent's changes become proposals.
 */
describe('the authorization matrix where every change waits for approval', () => {
  const HELD = ['agent', 'editor', 'viewer', 'viewer@shop', 'editor@shop'] as const;
  type Held = (typeof HELD)[number];
  let svc: TestService;
  let admin: HttpClient;
  let clients: Record<Held, HttpClient>;
  let projects: Record<'shop' | 'web', Json>;
  let flags: Record<'shop' | 'web', Json>;
  const archivable: Record<'shop' | 'web', string[]> = { shop: [], web: [] };
  let n = 0;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    projects = { shop: await createProject(admin, 'shop'), web: await createProject(admin, 'web') };
    flags = {
      shop: await createFlag(admin, projects.shop.id, { key: 'checkout' }),
      web: await createFlag(admin, projects.web.id, { key: 'banner' }),
    };
    for (const slug of ['shop', 'web'] as const) {
      const id = flags[slug].id;
      // Every promotion changes its destination, so each one the caller may make is a proposal.
      expect((await admin.put(`/api/v1/flags/${id}/environments/dev/config`, { enabled: true, rolloutPct: 10 })).status).toBe(200);
      expect((await admin.put(`/api/v1/flags/${id}/environments/staging/config`, { enabled: true, rolloutPct: 20 })).status).toBe(200);
      expect((await admin.put(`/api/v1/projects/${projects[slug].id}/segments/beta`, { name: 'Beta', userIds: ['a'] })).status).toBe(201);
      for (let i = 0; i < HELD.length; i++) archivable[slug].push((await createFlag(admin, projects[slug].id, { key: `old-${i}` })).id);
      const policy = { dev: ['agent', 'session'], staging: ['agent', 'session'], prod: ['agent', 'session'] };
      expect((await admin.patch(`/api/v1/projects/${projects[slug].id}`, { requireApproval: policy })).status).toBe(200);
    }
    const session = async (username: string, role: string) => {
      const res = await admin.post('/api/v1/users', { username, name: username, password: `${username}-password-1`, role });
      if (res.status !== 201) throw new Error(`user ${username}: ${res.status} ${JSON.stringify(res.body)}`);
      return sessionClient(svc.controlUrl, await signIn(svc.controlUrl, username));
    };
    clients = {
      agent: httpClient(svc.controlUrl, svc.agent),
      editor: await session('eddie', 'editor'),
      viewer: await session('vera', 'viewer'),
      'viewer@shop': await session('vic', 'viewer@shop'),
      'editor@shop': await session('shelly', 'editor@shop'),
    };
  });
  afterAll(() => svc.stop());

  const flag =
    (slug: 'shop' | 'web', rest = '') =>
    () =>
      `/api/v1/flags/${flags[slug].id}${rest}`;
  //                                                                          agent edit  view  view@s edit@s
  const rows: Array<Omit<Row, 'expected'> & { expected: [number, number, number, number, number] }> = [
    ...(['shop', 'web'] as const).flatMap((slug) => {
      const outside = slug === 'web' ? 404 : 0;
      const shopOnly = (inside: number): number => outside || inside;
      return [
        {
          name: `config in prod of ${slug}`,
          method: 'PUT',
          path: flag(slug, '/environments/prod/config'),
          body: () => ({ rolloutPct: ++n }),
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `rollout plan in prod of ${slug}`,
          method: 'POST',
          path: flag(slug, '/environments/prod/rollout-plan'),
          body: () => ({ startPct: 5, stepPct: 20, every: '1h' }),
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `promote into prod of ${slug}`,
          method: 'POST',
          path: flag(slug, '/environments/prod/promote'),
          body: () => ({ fromEnv: 'staging' }),
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `promote into staging of ${slug}`,
          method: 'POST',
          path: flag(slug, '/environments/staging/promote'),
          body: () => ({ fromEnv: 'dev' }),
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `preview of a promotion into prod of ${slug}`,
          method: 'POST',
          path: flag(slug, '/environments/prod/preview'),
          body: () => ({ fromEnv: 'staging' }),
          expected: [200, 200, 403, 403, shopOnly(200)],
        },
        {
          name: `archive in ${slug}`,
          method: 'DELETE',
          path: () => `/api/v1/flags/${archivable[slug].pop()}`,
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `new segment in ${slug}`,
          method: 'PUT',
          path: () => `/api/v1/projects/${projects[slug].id}/segments/s-${++n}`,
          body: () => ({ name: 'S', userIds: ['a'] }),
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `segment deleted in ${slug}`,
          method: 'DELETE',
          path: () => `/api/v1/projects/${projects[slug].id}/segments/beta`,
          expected: [202, 202, 403, 403, shopOnly(202)],
        },
        {
          name: `new flag in ${slug}`,
          method: 'POST',
          path: () => `/api/v1/projects/${projects[slug].id}/flags`,
          body: () => ({ key: `f-${++n}` }),
          expected: [201, 201, 403, 403, shopOnly(201)],
        },
      ] satisfies Array<Omit<Row, 'expected'> & { expected: [number, number, number, number, number] }>;
    }),
  ];

  it('a credential that may not make a change may not propose it: 403 (404 outside its projects), and no proposal is made', async () => {
    const mismatches: string[] = [];
    let proposed = 0;
    for (const row of rows) {
      for (const [i, column] of HELD.entries()) {
        const expected = row.expected[i];
        const res = await clients[column].request(row.method, row.path(), { body: row.body?.() });
        if (res.status === 202) proposed++;
        const code = { 403: 'forbidden', 404: 'not_found' }[expected as 403 | 404];
        if (res.status !== expected)
          mismatches.push(`${row.name} with ${column}: ${res.status} (expected ${expected}) ${JSON.stringify(res.body)}`);
        else if (code && res.body?.error?.code !== code) mismatches.push(`${row.name} with ${column}: body ${JSON.stringify(res.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
    // Every proposal is one answered 202, none is a viewer's, and none of editor@shop's is outside shop.
    const open = (await admin.get('/api/v1/proposals?status=open')).body.proposals as Json[];
    expect(open.length).toBe(proposed);
    expect(open.filter((p) => String(p.proposedBy.role ?? '').startsWith('viewer'))).toEqual([]);
    expect(open.filter((p) => p.proposedBy.role === 'editor@shop' && p.projectSlug !== 'shop')).toEqual([]);
  });
});

/** A client that carries a dashboard session as a same-origin page does (cookie, CSRF token). */
function sessionClient(baseUrl: string, session: SignedIn): HttpClient {
  const plain = httpClient(baseUrl);
  const request = <T>(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    plain.request<T>(method, path, { ...options, headers: { ...sessionHeaders(baseUrl, session), ...options.headers } }) as Promise<
      HttpResponse<T>
    >;
  return {
    request,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, { body }),
    put: (path, body) => request('PUT', path, { body }),
    patch: (path, body) => request('PATCH', path, { body }),
    delete: (path) => request('DELETE', path),
  };
}
