import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { createFlag, createProject } from './fixtures.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');
const HOUR = 3_600_000;

describe('scoped, expiring and rotated keys', () => {
  let svc: TestService;
  let admin: HttpClient;
  let shop: Json;
  let web: Json;
  let flag: Json;
  const clock = new ManualClock(T0);
  const logs: string[] = [];

  beforeAll(async () => {
    const logger = createLogger({ level: 'warn', write: (line: string) => logs.push(line) });
    svc = await startTestService({ clock, logger });
    admin = httpClient(svc.controlUrl, svc.admin);
    shop = await createProject(admin, 'shop');
    web = await createProject(admin, 'web');
    flag = await createFlag(admin, shop.id, { key: 'checkout' });
  });
  afterAll(() => svc.stop());

  describe('creating', () => {
    it('answers and lists the limits: projects, environments, expiresAt (in UTC)', async () => {
      const res = await admin.post('/api/v1/keys', {
        kind: 'agent',
        name: 'release-bot',
        projects: [shop.id],
        environments: ['dev', 'staging'],
        expiresAt: '2026-11-26T12:30:00+01:00',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        kind: 'agent',
        name: 'release-bot',
        projects: [shop.id],
        environments: ['dev', 'staging'],
        expiresAt: '2026-11-26T11:30:00.000Z',
      });
      const listed = (await admin.get('/api/v1/keys')).body.keys.find((k: Json) => k.id === res.body.id);
      expect(listed).toMatchObject({ projects: [shop.id], environments: ['dev', 'staging'], expiresAt: '2026-11-26T11:30:00.000Z' });
      expect(listed.key).toBeUndefined();
    });

    it('refuses an expiry in the past or not a moment, and projects or environments on an sdk key, with 400 naming the field', async () => {
      const cases: Array<[Json, string]> = [
        [{ kind: 'agent', expiresAt: '2026-11-26T09:59:59Z' }, 'expiresAt must be in the future'],
        [{ kind: 'agent', expiresAt: '2026-11-26' }, 'expiresAt must be an ISO-8601 date and time'],
        [{ kind: 'agent', expiresAt: 'tomorrow' }, 'expiresAt'],
        [{ kind: 'agent', expiresAt: '2026-13-40T10:00:00Z' }, 'expiresAt'],
        // Days the calendar lacks, which Date.parse would move into the next month.
        [{ kind: 'agent', expiresAt: '2030-02-30T00:00:00Z' }, 'expiresAt must be an ISO-8601 date and time'],
        [{ kind: 'agent', expiresAt: '2031-02-29T12:00:00+02:00' }, 'expiresAt must be an ISO-8601 date and time'],
        [{ kind: 'admin', environments: ['qa'] }, 'environments'],
        [{ kind: 'admin', projects: [] }, 'projects'],
        [{ kind: 'sdk', projectId: shop.id, environment: 'dev', environments: ['dev'] }, 'environments'],
        [{ kind: 'sdk', projectId: shop.id, environment: 'dev', expiresAt: '2026-11-26T09:59:59Z' }, 'expiresAt must be in the future'],
        [{ kind: 'sdk', projectId: shop.id, environment: 'dev', projects: [shop.id] }, 'projects'],
      ];
      for (const [body, words] of cases) {
        const res = await admin.post('/api/v1/keys', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
        expect(res.body.error.message, JSON.stringify(body)).toContain(words);
      }
    });

    it('refuses a project the organisation does not have with 404', async () => {
      const res = await admin.post('/api/v1/keys', { kind: 'agent', projects: ['prj_nope'] });
      expect(res.status).toBe(404);
    });

    it('lets a limited admin key make keys only within its own limits, inheriting what the request leaves out', async () => {
      const shopAdmin = httpClient(
        svc.controlUrl,
        (await admin.post('/api/v1/keys', { kind: 'admin', projects: [shop.id], expiresAt: '2026-11-27T10:00:00Z' })).body.key,
      );
      const inherited = await shopAdmin.post('/api/v1/keys', { kind: 'agent', name: 'child' });
      expect(inherited.status).toBe(201);
      expect(inherited.body).toMatchObject({ projects: [shop.id], expiresAt: '2026-11-27T10:00:00.000Z' });
      const sdk = await shopAdmin.post('/api/v1/keys', { kind: 'sdk', projectId: shop.id, environment: 'prod' });
      expect(sdk.status).toBe(201);
      expect((await shopAdmin.post('/api/v1/keys', { kind: 'sdk', projectId: web.id, environment: 'prod' })).status).toBe(404);
      const later = await shopAdmin.post('/api/v1/keys', { kind: 'agent', expiresAt: '2026-12-31T00:00:00Z' });
      expect(later.status).toBe(403);
      expect(later.body.error.message).toContain('within them');
      // It manages only keys within its limits: others are not found to it.
      const ids = (await shopAdmin.get('/api/v1/keys')).body.keys.map((k: Json) => k.id);
      expect(ids).toEqual(expect.arrayContaining([inherited.body.id, sdk.body.id]));
      const unlimited = (await admin.get('/api/v1/keys')).body.keys.find((k: Json) => k.name === 'bootstrap');
      expect(ids).not.toContain(unlimited.id);
      expect((await shopAdmin.delete(`/api/v1/keys/${unlimited.id}`)).status).toBe(404);
      expect((await shopAdmin.post(`/api/v1/keys/${unlimited.id}/rotate`, {})).status).toBe(404);
      expect((await shopAdmin.delete(`/api/v1/keys/${inherited.body.id}`)).status).toBe(200);
    });

    it('an expiring admin key makes sdk keys that end with it, and sees, revokes and rotates none that outlasts it', async () => {
      const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
      const expiresAt = at(HOUR);
      const expiring = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'admin', name: 'exp', expiresAt })).body.key);
      const lasting = (await admin.post('/api/v1/keys', { kind: 'sdk', name: 'lasting', projectId: shop.id, environment: 'prod' })).body;
      const sdk = { kind: 'sdk', projectId: shop.id, environment: 'prod' };
      const made = await expiring.post('/api/v1/keys', sdk);
      expect(made.status).toBe(201);
      expect(made.body.expiresAt).toBe(expiresAt);
      const sooner = await expiring.post('/api/v1/keys', { ...sdk, expiresAt: at(HOUR / 2) });
      expect(sooner.status).toBe(201);
      expect(sooner.body.expiresAt).toBe(at(HOUR / 2));
      const later = await expiring.post('/api/v1/keys', { ...sdk, expiresAt: at(2 * HOUR) });
      expect(later.status).toBe(403);
      expect(later.body.error.message).toContain('expiring no later than itself');
      // An admin key without an expiry may give an sdk key one.
      expect((await admin.post('/api/v1/keys', { ...sdk, expiresAt: at(2 * HOUR) })).body.expiresAt).toBe(at(2 * HOUR));

      const ids = (await expiring.get('/api/v1/keys')).body.keys.map((k: Json) => k.id);
      expect(ids).toContain(made.body.id);
      expect(ids).not.toContain(lasting.id);
      expect((await expiring.post(`/api/v1/keys/${lasting.id}/rotate`, {})).status).toBe(404);
      expect((await expiring.delete(`/api/v1/keys/${lasting.id}`)).status).toBe(404);

      const evaluate = (key: string) => httpClient(svc.evalUrl, key).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u1' } });
      expect((await evaluate(made.body.key)).status).toBe(200);
      clock.advance(HOUR);
      const refused = await evaluate(made.body.key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toBe(`the sdk key ${made.body.prefix}… (${made.body.name}) expired at ${expiresAt}`);
      expect((await evaluate(lasting.key)).status).toBe(200);
    });
  });

  describe('expiry', () => {
    it('works until expiresAt, then answers 401 saying it expired and when; the log names the prefix', async () => {
      const created = (
        await admin.post('/api/v1/keys', { kind: 'agent', name: 'short', expiresAt: new Date(clock.now().getTime() + HOUR).toISOString() })
      ).body;
      const agent = httpClient(svc.controlUrl, created.key);
      expect((await agent.get('/api/v1/projects')).status).toBe(200);
      clock.advance(HOUR);
      const res = await agent.get('/api/v1/projects');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.body.error.message).toBe(`the agent key ${created.prefix}… (short) expired at ${created.expiresAt}`);
      expect((await agent.post(`/api/v1/flags/${flag.id}/environments/dev/kill`)).status).toBe(401);
      const line = logs.find((l) => l.includes('key refused') && l.includes(created.prefix));
      expect(line).toBeDefined();
      expect(line).toContain('expired at');
      expect(line).not.toContain(created.key);
    });

    it('an admin key that expires makes nothing that outlasts it: no dashboard users, webhooks, projects, replication (403)', async () => {
      const expiresAt = new Date(clock.now().getTime() + HOUR).toISOString();
      const contractor = httpClient(
        svc.controlUrl,
        (await admin.post('/api/v1/keys', { kind: 'admin', name: 'contractor', expiresAt })).body.key,
      );
      const refused = [
        await contractor.post('/api/v1/users', { username: 'backdoor', name: 'B', password: 'a long passphrase 123', role: 'admin' }),
        await contractor.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }),
        await contractor.post('/api/v1/projects', { slug: 'outlasting', name: 'Outlasting' }),
        await contractor.get('/api/v1/replica/keys'),
        await contractor.get('/api/v1/replica/snapshots'),
        await contractor.get('/api/v1/replica/stream'),
      ];
      for (const res of refused) {
        expect(res.status).toBe(403);
        expect(res.body.error.message).toMatch(
          new RegExp(
            `^an admin key expiring at ${expiresAt} may not .*: that reaches past its expiry; it needs a credential without limits$`,
          ),
        );
      }
      expect(refused[0].body.error.message).toContain('may not manage dashboard users');
      // Within its limits it is an admin key: it reads, and the keys it makes end with it.
      expect((await contractor.get('/api/v1/projects')).status).toBe(200);
      const child = await contractor.post('/api/v1/keys', { kind: 'admin', name: 'contractor-child' });
      expect(child.status).toBe(201);
      expect(child.body.expiresAt).toBe(expiresAt);
    });

    it('an admin key that expires creates no trigger, whose URL would kill the flag after the key ended (403)', async () => {
      const expiresAt = new Date(clock.now().getTime() + HOUR).toISOString();
      const expiring = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'admin', expiresAt })).body.key);
      const path = `/api/v1/flags/${flag.id}/environments/staging/triggers`;
      const refused = await expiring.post(path, { name: 'outlive' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        `an admin key expiring at ${expiresAt} may not create triggers: a trigger's URL would kill the flag past the key's expiry; it needs a key without an expiry or an admin session`,
      );
      expect((await admin.get(path)).body.triggers.map((t: Json) => t.name)).not.toContain('outlive');
      expect((await admin.post(path, { name: 'lasting' })).status).toBe(201);
    });
  });

  describe('rotation', () => {
    it('answers 201 with a new key of the same kind, name and limits; the old one works through the grace, then 401 saying it was rotated', async () => {
      const old = (await admin.post('/api/v1/keys', { kind: 'agent', name: 'ci', projects: [shop.id], environments: ['dev'] })).body;
      const rotated = await admin.post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds: 600 });
      expect(rotated.status).toBe(201);
      expect(rotated.body).toMatchObject({ kind: 'agent', name: 'ci', projects: [shop.id], environments: ['dev'], rotatedFrom: old.id });
      expect(rotated.body.key).not.toBe(old.key);
      expect(rotated.body.prefix).not.toBe(old.prefix);
      const listedOld = (await admin.get('/api/v1/keys')).body.keys.find((k: Json) => k.id === old.id);
      expect(listedOld).toMatchObject({
        replacedBy: rotated.body.id,
        graceEndsAt: new Date(clock.now().getTime() + 600_000).toISOString(),
      });

      const before = httpClient(svc.controlUrl, old.key);
      const after = httpClient(svc.controlUrl, rotated.body.key);
      expect((await before.get(`/api/v1/projects/${shop.id}`)).status).toBe(200);
      expect((await after.get(`/api/v1/projects/${shop.id}`)).status).toBe(200);
      expect((await after.get(`/api/v1/projects/${web.id}`)).status).toBe(404);
      clock.advance(599_000);
      expect((await before.get('/api/v1/projects')).status).toBe(200);
      clock.advance(1_000);
      const refused = await before.get('/api/v1/projects');
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain('was rotated at');
      expect(refused.body.error.message).toContain(rotated.body.id);
      expect((await after.get('/api/v1/projects')).status).toBe(200);
    });

    it('with no grace, the old key stops at once; a rotated or revoked key cannot be rotated again (409)', async () => {
      const old = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'ops' })).body;
      const client = httpClient(svc.controlUrl, old.key);
      expect((await client.get('/api/v1/keys')).status).toBe(200);
      const rotated = await admin.post(`/api/v1/keys/${old.id}/rotate`);
      expect(rotated.status).toBe(201);
      expect((await client.get('/api/v1/keys')).status).toBe(401);
      const again = await admin.post(`/api/v1/keys/${old.id}/rotate`, {});
      expect(again.status).toBe(409);
      expect(again.body.error.message).toContain(rotated.body.id);
      await admin.delete(`/api/v1/keys/${rotated.body.id}`);
      expect((await admin.post(`/api/v1/keys/${rotated.body.id}/rotate`, {})).status).toBe(409);
    });

    it('a grace ends no later than the old key expires, the new key names the key that rotated it, and an expired key is 409', async () => {
      const expiresAt = new Date(clock.now().getTime() + HOUR).toISOString();
      const old = (await admin.post('/api/v1/keys', { kind: 'agent', name: 'short-lived', expiresAt })).body;
      const rotator = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'rotator' })).body;
      const rotated = await httpClient(svc.controlUrl, rotator.key).post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds: 7200 });
      expect(rotated.status).toBe(201);
      expect(rotated.body).toMatchObject({ expiresAt, rotatedFrom: old.id, createdBy: rotator.id });
      const listedOld = (await admin.get('/api/v1/keys')).body.keys.find((k: Json) => k.id === old.id);
      expect(listedOld).toMatchObject({ graceEndsAt: expiresAt, createdBy: old.createdBy });

      clock.advance(HOUR);
      const expired = await admin.post(`/api/v1/keys/${rotated.body.id}/rotate`, { graceSeconds: 100 });
      expect(expired.status).toBe(409);
      expect(expired.body.error.message).toBe(
        `key ${rotated.body.prefix}… expired at ${expiresAt}; an expired key cannot be rotated: create a new key`,
      );
      expect((await admin.get('/api/v1/keys')).body.keys.filter((k: Json) => k.rotatedFrom === rotated.body.id)).toEqual([]);
    });

    it('refuses a grace outside 0 to 604800 seconds with 400, and an unknown key with 404', async () => {
      const old = (await admin.post('/api/v1/keys', { kind: 'agent' })).body;
      for (const graceSeconds of [-1, 604_801, 1.5, '60']) {
        const res = await admin.post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds });
        expect(res.status, String(graceSeconds)).toBe(400);
        expect(res.body.error.message).toContain('graceSeconds');
      }
      expect((await admin.post('/api/v1/keys/key_nope/rotate', {})).status).toBe(404);
    });

    it('rotates an sdk key: the evaluation API takes both until the grace ends, then only the new one', async () => {
      const old = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: shop.id, environment: 'prod' })).body;
      const rotated = (await admin.post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds: 3600 })).body;
      expect(rotated).toMatchObject({ kind: 'sdk', projectId: shop.id, environment: 'prod' });
      const evaluate = (key: string) => httpClient(svc.evalUrl, key).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u1' } });
      expect((await evaluate(old.key)).status).toBe(200);
      expect((await evaluate(rotated.key)).status).toBe(200);
      clock.advance(HOUR);
      const refused = await evaluate(old.key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain('was rotated');
      expect((await evaluate(rotated.key)).status).toBe(200);
    });

    it('keys survive a restart with their limits and rotation', async () => {
      const old = (await admin.post('/api/v1/keys', { kind: 'agent', projects: [shop.id] })).body;
      const rotated = (await admin.post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds: 60 })).body;
      await svc.restart();
      const client = httpClient(svc.controlUrl, rotated.key);
      expect((await client.get(`/api/v1/projects/${web.id}`)).status).toBe(404);
      expect((await httpClient(svc.controlUrl, old.key).get('/api/v1/projects')).status).toBe(200);
      clock.advance(60_000);
      expect((await httpClient(svc.controlUrl, old.key).get('/api/v1/projects')).status).toBe(401);
    });
  });

  describe('limits and proposals', () => {
    it('a change outside an environment limit is refused, even where the project would make it a proposal', async () => {
      // The restart above moved the service to new ports.
      const admin = httpClient(svc.controlUrl, svc.admin);
      const other = await createProject(admin, 'reviewed');
      const reviewed = await createFlag(admin, other.id, { key: 'pricing' });
      await admin.patch(`/api/v1/projects/${other.id}`, { requireApproval: { prod: ['agent'] } });
      const devAgent = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'agent', environments: ['dev'] })).body.key);
      const refused = await devAgent.put(`/api/v1/flags/${reviewed.id}/environments/prod/config`, { rolloutPct: 5 });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('limited to environment dev');
      // dev differs from prod, so the promotion would change something (a proposal, were it not refused).
      await devAgent.put(`/api/v1/flags/${reviewed.id}/environments/dev/config`, { enabled: true, rolloutPct: 50 });
      const promoted = await devAgent.post(`/api/v1/flags/${reviewed.id}/environments/prod/promote`, { fromEnv: 'dev' });
      expect(promoted.status).toBe(403);
      expect(promoted.body.error.message).toContain('limited to environment dev');
      expect(
        (await httpClient(svc.controlUrl, svc.agent).post(`/api/v1/flags/${reviewed.id}/environments/prod/promote`, { fromEnv: 'dev' }))
          .status,
      ).toBe(202);
      // The same config change by an agent key without limits waits for approval.
      const agent = httpClient(svc.controlUrl, svc.agent);
      expect((await agent.put(`/api/v1/flags/${reviewed.id}/environments/prod/config`, { rolloutPct: 5 })).status).toBe(202);
    });

    it('deciding an archive proposal with a key limited to environments is refused in the words of archiving', async () => {
      const admin = httpClient(svc.controlUrl, svc.admin);
      const other = await createProject(admin, 'archiving');
      const doomed = await createFlag(admin, other.id, { key: 'old-banner' });
      await admin.patch(`/api/v1/projects/${other.id}`, { requireApproval: { prod: ['agent'] } });
      const proposed = await httpClient(svc.controlUrl, svc.agent).delete(`/api/v1/flags/${doomed.id}`);
      expect(proposed.status).toBe(202);
      expect(proposed.body.proposal).toMatchObject({ action: 'flag_archive', environment: null });
      const devAdmin = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'admin', environments: ['dev'] })).body.key);
      for (const decision of ['approve', 'reject']) {
        const refused = await devAdmin.post(`/api/v1/proposals/${proposed.body.proposal.id}/${decision}`, {});
        expect(refused.status, decision).toBe(403);
        expect(refused.body.error.message).toBe(
          'an admin key limited to environment dev may not archive flags: that acts in every environment; it needs a credential not limited to environments',
        );
      }
    });

    it('a preview answers the refusal the write would, never "it would open a proposal"', async () => {
      const admin = httpClient(svc.controlUrl, svc.admin);
      const other = await createProject(admin, 'previewed');
      const previewed = await createFlag(admin, other.id, { key: 'banner' });
      const open = await createFlag(admin, (await createProject(admin, 'unreviewed')).id, { key: 'banner' });
      await admin.patch(`/api/v1/projects/${other.id}`, { requireApproval: { prod: ['agent'] } });
      const devAgent = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'agent', environments: ['dev'] })).body.key);
      const agent = httpClient(svc.controlUrl, svc.agent);
      const cases: Array<[HttpClient, Json, string, Json]> = [
        // Outside the key's environments: refused, even where the project would make it a proposal.
        [devAgent, previewed, 'put', { rolloutPct: 5 }],
        [devAgent, previewed, 'promote', { fromEnv: 'dev' }],
        // An agent key's promotion into prod, where the project does not turn it into a proposal.
        [agent, open, 'promote', { fromEnv: 'dev' }],
      ];
      for (const [client, flag, write, body] of cases) {
        const made =
          write === 'put'
            ? await client.put(`/api/v1/flags/${flag.id}/environments/prod/config`, body)
            : await client.post(`/api/v1/flags/${flag.id}/environments/prod/promote`, body);
        const preview = await client.post(
          `/api/v1/flags/${flag.id}/environments/prod/preview`,
          write === 'put' ? { config: body } : { fromEnv: body.fromEnv },
        );
        expect(made.status, JSON.stringify(body)).toBe(403);
        expect(preview.status, JSON.stringify(body)).toBe(403);
        expect(preview.body).toEqual(made.body);
      }
      // Where the write would become a proposal, the preview says so.
      const proposed = await agent.post(`/api/v1/flags/${previewed.id}/environments/prod/preview`, { fromEnv: 'dev' });
      expect(proposed.status).toBe(200);
      expect(proposed.body.requiresApproval).toBe(true);
    });
  });
});
