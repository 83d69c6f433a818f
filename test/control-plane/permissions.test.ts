import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

type Credential = 'admin' | 'agent' | 'sdk' | 'none' | 'bad' | 'revoked';
const CREDENTIALS: Credential[] = ['admin', 'agent', 'sdk', 'none', 'bad', 'revoked'];

interface Row {
  name: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  /** Expected status for admin and agent keys; every other credential is 401. */
  admin: number;
  agent: number;
}

describe('the permission matrix', () => {
  let svc: TestService;
  let keys: Record<Credential, string | null>;
  let project: Json;
  let flag: Json;
  let archivable: Json;
  let spareKeyId: string;
  let n = 0;

  beforeAll(async () => {
    svc = await startTestService();
    const admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout' });
    archivable = await createFlag(admin, project.id, { key: 'archivable' });
    spareKeyId = (await admin.post('/api/v1/keys', { kind: 'agent', name: 'spare' })).body.id;
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const revoked = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'revoked' })).body;
    await admin.delete(`/api/v1/keys/${revoked.id}`);
    keys = { admin: svc.admin, agent: svc.agent, sdk, none: null, bad: generateKey('admin'), revoked: revoked.key };
  });
  afterAll(() => svc.stop());

  const flagPath = (rest = '') => `/api/v1/flags/${flag.id}${rest}`;
  const rows: Row[] = [
    { name: 'list projects', method: 'GET', path: () => '/api/v1/projects', admin: 200, agent: 200 },
    {
      name: 'create project',
      method: 'POST',
      path: () => '/api/v1/projects',
      body: () => ({ name: 'P', slug: `p-${++n}` }),
      admin: 201,
      agent: 403,
    },
    { name: 'list flags', method: 'GET', path: () => `/api/v1/projects/${project.id}/flags`, admin: 200, agent: 200 },
    {
      name: 'create flag',
      method: 'POST',
      path: () => `/api/v1/projects/${project.id}/flags`,
      body: () => ({ key: `f-${++n}` }),
      admin: 201,
      agent: 201,
    },
    { name: 'lookup flag', method: 'GET', path: () => '/api/v1/flags/lookup?projectSlug=shop&key=checkout', admin: 200, agent: 200 },
    { name: 'get flag', method: 'GET', path: () => flagPath(), admin: 200, agent: 200 },
    { name: 'patch flag', method: 'PATCH', path: () => flagPath(), body: () => ({ name: `name ${++n}` }), admin: 200, agent: 200 },
    { name: 'archive flag', method: 'DELETE', path: () => `/api/v1/flags/${archivable.id}`, admin: 200, agent: 403 },
    {
      name: 'update config',
      method: 'PUT',
      path: () => flagPath('/environments/dev/config'),
      body: () => ({ rolloutPct: ++n % 100 }),
      admin: 200,
      agent: 200,
    },
    {
      name: 'clear kill',
      method: 'PUT',
      path: () => flagPath('/environments/staging/config'),
      body: () => ({ clearKill: true }),
      admin: 200,
      agent: 200,
    },
    { name: 'kill', method: 'POST', path: () => flagPath('/environments/staging/kill'), admin: 200, agent: 200 },
    {
      name: 'promote into staging',
      method: 'POST',
      path: () => flagPath('/environments/staging/promote'),
      body: () => ({ fromEnv: 'dev' }),
      admin: 200,
      agent: 200,
    },
    {
      name: 'promote into prod',
      method: 'POST',
      path: () => flagPath('/environments/prod/promote'),
      body: () => ({ fromEnv: 'staging' }),
      admin: 200,
      agent: 403,
    },
    { name: 'stats', method: 'GET', path: () => flagPath('/environments/prod/stats?period=24h'), admin: 200, agent: 200 },
    { name: 'create key', method: 'POST', path: () => '/api/v1/keys', body: () => ({ kind: 'agent' }), admin: 201, agent: 403 },
    { name: 'list keys', method: 'GET', path: () => '/api/v1/keys', admin: 200, agent: 403 },
    { name: 'revoke key', method: 'DELETE', path: () => `/api/v1/keys/${spareKeyId}`, admin: 200, agent: 403 },
    { name: 'audit', method: 'GET', path: () => '/api/v1/audit', admin: 200, agent: 200 },
  ];

  it('every credential × every route answers the expected status, and refusals carry the { error: { code, message } } body', async () => {
    const mismatches: string[] = [];
    for (const row of rows) {
      for (const credential of CREDENTIALS) {
        const expected = credential === 'admin' ? row.admin : credential === 'agent' ? row.agent : 401;
        const res = await httpClient(svc.controlUrl, keys[credential]).request(row.method, row.path(), { body: row.body?.() });
        const code = expected === 401 ? 'unauthorized' : expected === 403 ? 'forbidden' : undefined;
        if (res.status !== expected)
          mismatches.push(`${row.name} with ${credential}: ${res.status} (expected ${expected}) ${JSON.stringify(res.body)}`);
        else if (code && res.body?.error?.code !== code)
          mismatches.push(`${row.name} with ${credential}: body ${JSON.stringify(res.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
