import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, sessionHeaders, signIn } from '../dashboard/helpers/dashboard-session.js';
import { gitAsync } from '../git-http/git-async.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { git, pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

const execFileAsync = promisify(execFile);
const gitDir = (gitdir: string, ...args: string[]) => execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8' }).trim();

describe('change proposals for protected environments', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let otherAdmin: HttpClient;
  let project: Json;
  let n = 0;

  const main = () => gitDir(svc.gitdir(), 'rev-parse', 'refs/heads/main');
  const proposalBranches = () => gitDir(svc.gitdir(), 'for-each-ref', '--format=%(refname)', 'refs/heads/proposals/');

  async function flag(): Promise<Json> {
    const created = await createFlag(admin, project.id, { key: `checkout-${++n}` });
    await admin.put(`/api/v1/flags/${created.id}/environments/prod/config`, { enabled: true, rolloutPct: 10 });
    await admin.put(`/api/v1/flags/${created.id}/environments/staging/config`, { enabled: true, rolloutPct: 50 });
    return created;
  }

  async function propose(f: Json, body: Json = { rolloutPct: 25 }): Promise<Json> {
    const res = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, body);
    expect(res.status).toBe(202);
    return res.body.proposal;
  }

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    const key = await admin.post('/api/v1/keys', { kind: 'admin', name: 'reviewer' });
    otherAdmin = httpClient(svc.controlUrl, key.body.key);
    project = await createProject(admin, 'shop');
    const patched = await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
    expect(patched.status).toBe(200);
  }, 60_000);
  afterAll(() => svc.stop());

  describe('requireApproval on the project', () => {
    it('GET project shows it; an agent key may not change it; unknown environments and actor types are 400', async () => {
      expect((await admin.get(`/api/v1/projects/${project.id}`)).body.requireApproval).toEqual({ prod: ['agent'] });
      expect((await agent.patch(`/api/v1/projects/${project.id}`, { requireApproval: {} })).status).toBe(403);
      const head = main();
      const badEnv = await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { production: ['agent'] } });
      expect(badEnv.status).toBe(400);
      const badType = await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['robot'] } });
      expect(badType.status).toBe(400);
      expect(badType.body.error.code).toBe('invalid_input');
      expect(main()).toBe(head);
      expect(gitDir(svc.gitdir(), 'show', 'main:projects/shop/project.yaml')).toContain('requireApproval');
    });
  });

  describe('a config update by a listed actor type', () => {
    it('answers 202 { proposal }, leaves main as it was and puts the change on proposals/<id>', async () => {
      const f = await flag();
      const head = main();
      const res = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 25 });
      expect(res.status).toBe(202);
      const p = res.body.proposal;
      expect(p).toMatchObject({
        status: 'open',
        projectSlug: 'shop',
        flagKey: f.key,
        environment: 'prod',
        action: 'config_update',
        proposedBy: { type: 'agent' },
        changes: [`shop/${f.key} prod: rolloutPct 10 → 25`],
        impact: [{ environment: 'prod', flagKey: f.key, exact: true, movedPct: 15, moves: [{ from: 'off', to: 'on', pct: 15 }] }],
      });
      expect(p.proposedBy.keyPrefix).toMatch(/^svc_agt_/);
      expect(p.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(p.decidedBy).toBeUndefined();
      expect(main()).toBe(head);
      expect((await admin.get(`/api/v1/flags/${f.id}`)).body.environments.prod.rolloutPct).toBe(10);
      const branch = gitDir(svc.gitdir(), 'rev-parse', `refs/heads/proposals/${p.id}`);
      expect(gitDir(svc.gitdir(), 'rev-parse', `${branch}^`)).toBe(head);
      expect(gitDir(svc.gitdir(), 'log', '-1', '--format=%B', branch)).toContain(`Flagops-Proposal: ${p.id}`);
    });

    it('other environments and other actor types are applied at once', async () => {
      const f = await flag();
      expect((await agent.put(`/api/v1/flags/${f.id}/environments/staging/config`, { rolloutPct: 60 })).status).toBe(200);
      expect((await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 60 })).status).toBe(200);
    });

    it('kills and cleared kills never wait; clearKill with a change that needs approval is 400 and changes nothing', async () => {
      const f = await flag();
      expect((await agent.post(`/api/v1/flags/${f.id}/environments/prod/kill`)).status).toBe(200);
      const head = main();
      const both = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 30, clearKill: true });
      expect(both.status).toBe(400);
      expect(main()).toBe(head);
      const cleared = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, { clearKill: true });
      expect(cleared.status).toBe(200);
      expect(cleared.body.environments.prod.killed).toBe(false);
    });

    it('a request that changes nothing makes no proposal: 200 with the flag as it is, no proposals/* branch, main as it was', async () => {
      const f = await flag();
      const before = (await admin.get(`/api/v1/flags/${f.id}`)).body;
      const head = main();
      const branches = proposalBranches();
      const open = (await admin.get('/api/v1/proposals?status=open')).body.proposals.length;
      const res = await agent.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 10 });
      expect(res.status).toBe(200);
      expect(res.body.proposal).toBeUndefined();
      expect(res.body).toEqual(before);
      expect(main()).toBe(head);
      expect(proposalBranches()).toEqual(branches);
      expect((await admin.get('/api/v1/proposals?status=open')).body.proposals).toHaveLength(open);
    });

    it('a segment write that changes nothing makes no proposal either', async () => {
      const body = { name: 'Same', userIds: ['u-1'] };
      expect((await admin.put(`/api/v1/projects/${project.id}/segments/unchanged`, body)).status).toBe(201);
      const head = main();
      const branches = proposalBranches();
      const res = await agent.put(`/api/v1/projects/${project.id}/segments/unchanged`, body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ key: 'unchanged', ...body, version: 1 });
      expect(main()).toBe(head);
      expect(proposalBranches()).toEqual(branches);
    });
  });

  describe('an agent promotion into prod', () => {
    it('is 403 while prod does not list agent, and a 202 proposal once it does', async () => {
      const other = await createProject(admin, 'other');
      const f = await createFlag(admin, other.id, { key: 'promo' });
      const refused = await agent.post(`/api/v1/flags/${f.id}/environments/prod/promote`, { fromEnv: 'staging' });
      expect(refused.status).toBe(403);
      await admin.patch(`/api/v1/projects/${other.id}`, { requireApproval: { prod: ['agent'] } });
      const proposed = await agent.post(`/api/v1/flags/${f.id}/environments/prod/promote`, { fromEnv: 'staging' });
      expect(proposed.status).toBe(202);
      expect(proposed.body.proposal).toMatchObject({ action: 'promote', environment: 'prod', fromEnvironment: 'staging', status: 'open' });
    });
  });

  describe('approve', () => {
    it('commits the change on main as one commit by the approver naming the proposer; 200 once served', async () => {
      const f = await flag();
      const p = await propose(f);
      const head = main();
      const res = await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: p.id, status: 'merged', decidedBy: { type: 'admin', name: 'reviewer' } });
      expect(gitDir(svc.gitdir(), 'rev-parse', 'main^')).toBe(head);
      const message = gitDir(svc.gitdir(), 'log', '-1', '--format=%B', 'main');
      expect(message).toContain(`Flagops-Proposal: ${p.id}`);
      expect(message).toContain('Flagops-Proposed-By-Type: agent');
      expect(gitDir(svc.gitdir(), 'log', '-1', '--format=%an', 'main')).toBe('reviewer');
      expect((await admin.get(`/api/v1/flags/${f.id}`)).body.environments.prod.rolloutPct).toBe(25);
      const evaluated = await fetch(`${svc.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${await sdkKey()}` } });
      expect(((await evaluated.json()) as Json).flags[f.key].rolloutPct).toBe(25);
      const audit = await admin.get(`/api/v1/audit?flagId=${f.id}&limit=5`);
      const applied = audit.body.entries.find((e: Json) => e.action === 'config_update' && e.proposalId === p.id);
      expect(applied).toMatchObject({ actor: { type: 'admin' }, proposedBy: { type: 'agent' } });
      expect(audit.body.entries.find((e: Json) => e.action === 'proposal_open')).toMatchObject({ id: p.commit, proposalId: p.id });
    });

    it('is 403 for the credential that proposed it (the same key, or the same person’s session)', async () => {
      const f = await flag();
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent', 'admin', 'session'] } });
      try {
        const own = await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 20 });
        expect(own.status).toBe(202);
        expect((await admin.post(`/api/v1/proposals/${own.body.proposal.id}/approve`)).status).toBe(403);
        await addUser(svc, 'alice', 'Alice');
        const alice = await signIn(svc.controlUrl, 'alice');
        const session = (method: string, path: string, body?: Json) =>
          fetch(`${svc.controlUrl}${path}`, {
            method,
            headers: sessionHeaders(svc.controlUrl, alice, { 'content-type': 'application/json' }),
            body: body === undefined ? undefined : JSON.stringify(body),
          });
        const proposed = await session('PUT', `/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 30 });
        expect(proposed.status).toBe(202);
        const id = ((await proposed.json()) as Json).proposal.id;
        const aliceAgain = await signIn(svc.controlUrl, 'alice');
        const refused = await fetch(`${svc.controlUrl}/api/v1/proposals/${id}/approve`, {
          method: 'POST',
          headers: sessionHeaders(svc.controlUrl, aliceAgain),
        });
        expect(refused.status).toBe(403);
        expect((await agent.post(`/api/v1/proposals/${id}/approve`)).status).toBe(403);
        expect((await otherAdmin.post(`/api/v1/proposals/${own.body.proposal.id}/approve`)).status).toBe(200);
      } finally {
        await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
      }
    });

    it('is 403 for a rotation of the proposing key, however many times rotated; a key it created is another credential', async () => {
      const f = await flag();
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent', 'admin'] } });
      try {
        const created = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'proposer', projects: [project.id] })).body;
        const proposerKey = httpClient(svc.controlUrl, created.key);
        const proposed = await proposerKey.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 46 });
        expect(proposed.status).toBe(202);
        const id = proposed.body.proposal.id;
        const child = (await proposerKey.post('/api/v1/keys', { kind: 'admin', name: 'child' })).body;
        expect(child.createdBy).toBe(created.id);
        const rotated = await proposerKey.post(`/api/v1/keys/${created.id}/rotate`, { graceSeconds: 600 });
        expect(rotated.status).toBe(201);
        const again = await httpClient(svc.controlUrl, rotated.body.key).post(`/api/v1/keys/${rotated.body.id}/rotate`, {
          graceSeconds: 600,
        });
        expect(again.status).toBe(201);
        for (const key of [created.key, rotated.body.key, again.body.key]) {
          const refused = await httpClient(svc.controlUrl, key).post(`/api/v1/proposals/${id}/approve`);
          expect(refused.status).toBe(403);
          expect(refused.body.error.message).toContain(`may not approve it`);
        }
        expect((await admin.get(`/api/v1/proposals/${id}`)).body.status).toBe('open');
        // Another key, even one the proposer created, is another credential.
        expect((await httpClient(svc.controlUrl, child.key).post(`/api/v1/proposals/${id}/approve`)).status).toBe(200);
      } finally {
        await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
      }
    });

    it('keeps the role of the sessions that propose and decide: on the proposal, its audit entries and the applied change', async () => {
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent', 'session'] } });
      try {
        const users: Array<[string, string, string]> = [
          ['sam', 'Sam Ortiz', 'editor@shop'],
          ['rita', 'Rita Moss', 'admin'],
        ];
        for (const [username, name, role] of users)
          expect((await admin.post('/api/v1/users', { username, name, password: `${username}-password-1`, role })).status).toBe(201);
        const [sam, rita] = [await signIn(svc.controlUrl, 'sam'), await signIn(svc.controlUrl, 'rita')];
        const sessionPost = (who: typeof sam, path: string, body: Json = {}) =>
          fetch(`${svc.controlUrl}${path}`, {
            method: 'POST',
            headers: sessionHeaders(svc.controlUrl, who, { 'content-type': 'application/json' }),
            body: JSON.stringify(body),
          });
        const samActor = { type: 'session', name: 'Sam Ortiz', role: 'editor@shop' };
        const propose = async (f: Json) => {
          const res = await sessionPost(sam, `/api/v1/flags/${f.id}/environments/prod/promote`, { fromEnv: 'staging' });
          expect(res.status).toBe(202);
          return ((await res.json()) as Json).proposal;
        };
        const opened = async (id: string) =>
          (await admin.get('/api/v1/audit?action=proposal_open&limit=500')).body.entries.find((e: Json) => e.proposalId === id);

        const approvedFlag = await flag();
        const approved = await propose(approvedFlag);
        expect(approved.proposedBy).toMatchObject(samActor);
        expect((await admin.get(`/api/v1/proposals/${approved.id}`)).body.proposedBy).toMatchObject(samActor);
        expect((await opened(approved.id)).actor).toMatchObject(samActor);
        expect((await admin.post(`/api/v1/proposals/${approved.id}/approve`)).status).toBe(200);
        const applied = (await admin.get(`/api/v1/audit?flagId=${approvedFlag.id}&limit=20`)).body.entries.find(
          (e: Json) => e.action === 'promote' && e.proposalId === approved.id,
        );
        expect(applied).toMatchObject({ actor: { type: 'admin' }, proposedBy: samActor });

        const rejected = await propose(await flag());
        expect((await sessionPost(rita, `/api/v1/proposals/${rejected.id}/reject`, { reason: 'not yet' })).status).toBe(200);
        const ritaActor = { type: 'session', name: 'Rita Moss', role: 'admin' };
        expect((await admin.get(`/api/v1/proposals/${rejected.id}`)).body).toMatchObject({ proposedBy: samActor, decidedBy: ritaActor });
        const rejection = (await admin.get('/api/v1/audit?action=proposal_reject&limit=500')).body.entries.find(
          (e: Json) => e.proposalId === rejected.id,
        );
        expect(rejection.actor).toMatchObject(ritaActor);
      } finally {
        await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
      }
    });

    it('is 409 version_conflict when main changed that config since, and the proposal stays open', async () => {
      const f = await flag();
      const p = await propose(f);
      await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 12 });
      const head = main();
      const res = await admin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('version_conflict');
      expect(main()).toBe(head);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body.status).toBe('open');
    });

    it('is 409 for a merged or rejected proposal, 404 for an unknown one and for another organisation’s', async () => {
      const f = await flag();
      const merged = await propose(f);
      expect((await admin.post(`/api/v1/proposals/${merged.id}/approve`)).status).toBe(200);
      expect((await admin.post(`/api/v1/proposals/${merged.id}/approve`)).status).toBe(409);
      expect((await admin.post(`/api/v1/proposals/${merged.id}/reject`)).status).toBe(409);
      const rejected = await propose(f, { rolloutPct: 70 });
      expect((await admin.post(`/api/v1/proposals/${rejected.id}/reject`, { reason: 'too fast' })).status).toBe(200);
      expect((await admin.post(`/api/v1/proposals/${rejected.id}/approve`)).status).toBe(409);
      expect((await admin.get('/api/v1/proposals/zzzzzzzzzzzz')).status).toBe(404);
      expect((await admin.post('/api/v1/proposals/zzzzzzzzzzzz/approve')).status).toBe(404);
      const globex = httpClient(svc.controlUrl, svc.orgs.globex.admin);
      expect((await globex.get(`/api/v1/proposals/${rejected.id}`)).status).toBe(404);
      expect((await globex.post(`/api/v1/proposals/${rejected.id}/approve`)).status).toBe(404);
    });

    it('keeps a rejection reason of several paragraphs whole, on the proposal and in the audit trail', async () => {
      const p = await propose(await flag());
      const reason = 'Too fast for a Friday.\n\nFlagops-Actor-Type: agent\n\nTry again on Monday.';
      expect((await admin.post(`/api/v1/proposals/${p.id}/reject`, { reason })).status).toBe(200);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({ status: 'rejected', rejectionReason: reason });
      const rejection = (await admin.get('/api/v1/audit?action=proposal_reject&limit=500')).body.entries.find(
        (e: Json) => e.proposalId === p.id,
      );
      expect(rejection).toMatchObject({ reason, actor: { type: 'admin' } });
    });

    it('is 409 invalid_in_repository while an invalid file holds the flag back', async () => {
      const f = await flag();
      const p = await propose(f);
      pushEdit(svc.gitdir(), (checkout) =>
        writeFileSync(path.join(checkout, `projects/shop/environments/dev/${f.key}.yaml`), 'enabled: maybe\n'),
      );
      const res = await admin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('invalid_in_repository');
    });
  });

  describe('a stale proposal (main changed what it changes since it was made)', () => {
    const prodVersion = async (f: Json): Promise<number> => (await admin.get(`/api/v1/flags/${f.id}`)).body.environments.prod.version;

    it('says stale: false while main holds what it changes, on the proposal, in the list, and on merged and rejected ones', async () => {
      const f = await flag();
      const p = await propose(f);
      expect(p.stale).toBe(false);
      expect(p.staleReason).toBeUndefined();
      const other = await flag();
      await admin.put(`/api/v1/flags/${other.id}/environments/prod/config`, { rolloutPct: 11 });
      await admin.put(`/api/v1/flags/${f.id}/environments/staging/config`, { rolloutPct: 55 });
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({ stale: false });
      const listed = (await admin.get('/api/v1/proposals')).body.proposals;
      expect(listed.every((q: Json) => typeof q.stale === 'boolean')).toBe(true);
      const rejected = await propose(f, { rolloutPct: 80 });
      expect((await admin.post(`/api/v1/proposals/${rejected.id}/reject`)).body).toMatchObject({ status: 'rejected', stale: false });
      expect((await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`)).body).toMatchObject({ status: 'merged', stale: false });
      await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 5 });
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({ status: 'merged', stale: false });
      expect((await admin.get(`/api/v1/proposals/${rejected.id}`)).body).toMatchObject({ status: 'rejected', stale: false });
    });

    it('says stale: true and what changed once the config changed on main, in the list too; approving is 409 saying so; rejecting works', async () => {
      const f = await flag();
      const p = await propose(f);
      const before = await prodVersion(f);
      await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 12 });
      const reason = `prod config of ${f.key} changed on main since: version ${before} → ${before + 1}`;
      const shown = (await admin.get(`/api/v1/proposals/${p.id}`)).body;
      expect(shown).toMatchObject({ status: 'open', stale: true, staleReason: reason });
      const listed = (await agent.get(`/api/v1/proposals?status=open&projectId=${project.id}`)).body.proposals;
      expect(listed.find((q: Json) => q.id === p.id)).toMatchObject({ stale: true, staleReason: reason });
      const head = main();
      const res = await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('version_conflict');
      expect(res.body.error.message).toContain(`proposal ${p.id} is stale: ${reason}`);
      expect(res.body.error.message).toContain('reject it');
      expect(main()).toBe(head);
      const rejected = await otherAdmin.post(`/api/v1/proposals/${p.id}/reject`, { reason: 'stale' });
      expect(rejected.body).toMatchObject({ status: 'rejected', stale: false });
      expect(rejected.body.staleReason).toBeUndefined();
    });

    it('a push that changes the config makes it stale too, also one that leaves version as it was', async () => {
      const f = await flag();
      const p = await propose(f);
      pushEdit(svc.gitdir(), (checkout) => {
        const file = path.join(checkout, `projects/shop/environments/prod/${f.key}.yaml`);
        writeFileSync(file, readFileSync(file, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 15'));
      });
      await expect
        .poll(async () => (await admin.get(`/api/v1/proposals/${p.id}`)).body.staleReason, { timeout: PROMPTLY_MS })
        .toBe(`prod config of ${f.key} changed on main since`);
      expect((await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`)).status).toBe(409);
    });

    it('a config changed by a push and put back, byte for byte, by another makes it stale: its version moved', async () => {
      const f = await flag();
      const p = await propose(f);
      const before = await prodVersion(f);
      const file = `projects/shop/environments/prod/${f.key}.yaml`;
      const original = git(svc.gitdir(), 'show', `main:${file}`);
      pushEdit(svc.gitdir(), (checkout) => writeFileSync(path.join(checkout, file), original.replace('rolloutPct: 10', 'rolloutPct: 15')));
      pushEdit(svc.gitdir(), (checkout) => writeFileSync(path.join(checkout, file), `${original}\n`));
      expect(git(svc.gitdir(), 'show', `main:${file}`)).toBe(original);
      await expect
        .poll(async () => (await admin.get(`/api/v1/proposals/${p.id}`)).body.staleReason, { timeout: PROMPTLY_MS })
        .toBe(`prod config of ${f.key} changed on main since and was put back: version ${before} → ${before + 2}`);
      expect((await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`)).status).toBe(409);
    });

    it('a deleted flag makes it stale', async () => {
      const f = await flag();
      const p = await propose(f);
      pushEdit(svc.gitdir(), (checkout) => {
        rmSync(path.join(checkout, `projects/shop/flags/${f.key}.yaml`));
        for (const env of ['dev', 'staging', 'prod'])
          rmSync(path.join(checkout, `projects/shop/environments/${env}/${f.key}.yaml`), { force: true });
      });
      await expect
        .poll(async () => (await admin.get(`/api/v1/proposals/${p.id}`)).body.staleReason, { timeout: PROMPTLY_MS })
        .toBe(`prod config of ${f.key} was deleted on main since`);
    });

    it('a prerequisite flag deleted on main since makes it stale, saying so; approving is 409 and main stays as it was', async () => {
      const f = await flag();
      const required = await createFlag(admin, project.id, { key: `required-${++n}` });
      const p = await propose(f, { prerequisites: [{ flag: required.key, variation: 'on' }] });
      expect(p.stale).toBe(false);
      pushEdit(svc.gitdir(), (checkout) => {
        rmSync(path.join(checkout, `projects/shop/flags/${required.key}.yaml`));
        for (const env of ['dev', 'staging', 'prod']) rmSync(path.join(checkout, `projects/shop/environments/${env}/${required.key}.yaml`));
      });
      const reason = `prod config of ${f.key} no longer fits main (prerequisites[0].flag: names flag "${required.key}", which project "shop" does not have)`;
      await expect
        .poll(async () => (await admin.get(`/api/v1/proposals/${p.id}`)).body, { timeout: PROMPTLY_MS })
        .toMatchObject({ status: 'open', stale: true, staleReason: reason });
      expect((await admin.get('/api/v1/proposals?status=open')).body.proposals.find((q: Json) => q.id === p.id).staleReason).toBe(reason);
      const head = main();
      const approve = await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(approve.status).toBe(409);
      expect(approve.body.error).toEqual({
        code: 'version_conflict',
        message: expect.stringContaining(`proposal ${p.id} is stale: ${reason}`),
      });
      expect(main()).toBe(head);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body.status).toBe('open');
    });

    it('a variation no longer served on main makes it stale too', async () => {
      const f = await flag();
      const required = await createFlag(admin, project.id, { key: `required-${++n}` });
      const variants = [
        { name: 'blue', value: true, weight: 50 },
        { name: 'green', value: false, weight: 50 },
      ];
      await admin.put(`/api/v1/flags/${required.id}/environments/prod/config`, { enabled: true, variants });
      const p = await propose(f, { prerequisites: [{ flag: required.key, variation: 'blue' }] });
      expect(p.stale).toBe(false);
      expect((await admin.put(`/api/v1/flags/${required.id}/environments/prod/config`, { variants: null })).status).toBe(200);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({
        stale: true,
        staleReason: `prod config of ${f.key} no longer fits main (prerequisites[0].variation: names variation "blue", which flag "${required.key}" cannot serve in prod (it serves on, off))`,
      });
      expect((await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`)).body.error.code).toBe('version_conflict');
    });

    it('a promotion is stale once its destination or its source changed on main, not for another environment', async () => {
      const f = await flag();
      const toProd = async () => {
        const res = await agent.post(`/api/v1/flags/${f.id}/environments/prod/promote`, { fromEnv: 'staging' });
        expect(res.status).toBe(202);
        return res.body.proposal;
      };
      const first = await toProd();
      await admin.put(`/api/v1/flags/${f.id}/environments/dev/config`, { rolloutPct: 70 });
      expect((await admin.get(`/api/v1/proposals/${first.id}`)).body.stale).toBe(false);
      const staging = (await admin.get(`/api/v1/flags/${f.id}`)).body.environments.staging.version;
      await admin.put(`/api/v1/flags/${f.id}/environments/staging/config`, { rolloutPct: 60 });
      const shown = (await admin.get(`/api/v1/proposals/${first.id}`)).body;
      expect(shown).toMatchObject({ stale: true });
      expect(shown.staleReason).toBe(
        `staging config of ${f.key} changed on main since: version ${staging} → ${staging + 1} (approving would promote staging as it was)`,
      );
      const res = await otherAdmin.post(`/api/v1/proposals/${first.id}/approve`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('version_conflict');
      const second = await toProd();
      const prod = await prodVersion(f);
      await admin.put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 3 });
      expect((await admin.get(`/api/v1/proposals/${second.id}`)).body.staleReason).toBe(
        `prod config of ${f.key} changed on main since: version ${prod} → ${prod + 1}`,
      );
    });

    it('a rollout plan whose first step has passed is stale and approving it is 409 with main as it was, not every passed step at once', async () => {
      const f = await flag();
      const res = await agent.post(`/api/v1/flags/${f.id}/environments/prod/rollout-plan`, { startPct: 5, stepPct: 20, every: '2s' });
      expect(res.status).toBe(202);
      const p = res.body.proposal;
      expect(p.stale).toBe(false);
      const file = git(svc.gitdir(), 'show', `${p.commit}:projects/shop/environments/prod/${f.key}.yaml`);
      const first = /at: '?([^'\n]+)'?/.exec(file)?.[1];
      await new Promise((resolve) => setTimeout(resolve, Date.parse(String(first)) - Date.now() + 100));
      const shown = (await admin.get(`/api/v1/proposals/${p.id}`)).body;
      expect(shown).toMatchObject({ status: 'open', stale: true });
      expect(shown.staleReason).toContain(`prod config of ${f.key} schedules a step at ${first}, which has passed`);
      const listed = (await admin.get('/api/v1/proposals?status=open')).body.proposals;
      expect(listed.find((q: Json) => q.id === p.id)).toMatchObject({ stale: true });
      const head = main();
      const approved = await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(approved.status).toBe(409);
      expect(approved.body.error.code).toBe('version_conflict');
      expect(approved.body.error.message).toContain(`schedules a step at ${first}, which has passed`);
      expect(approved.body.error.message).toContain('propose the change again');
      expect(main()).toBe(head);
      expect((await admin.get(`/api/v1/flags/${f.id}`)).body.environments.prod.rolloutPct).toBe(10);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body.status).toBe('open');
    });

    it('a segment proposal is stale once the segment changed on main', async () => {
      expect((await admin.put(`/api/v1/projects/${project.id}/segments/staff`, { userIds: ['a'] })).status).toBe(201);
      const proposed = await agent.put(`/api/v1/projects/${project.id}/segments/staff`, { userIds: ['a', 'b'] });
      expect(proposed.status).toBe(202);
      const p = proposed.body.proposal;
      expect(p.stale).toBe(false);
      const before = (await admin.get(`/api/v1/projects/${project.id}/segments/staff`)).body.version;
      await admin.put(`/api/v1/projects/${project.id}/segments/staff`, { userIds: ['c'] });
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({
        stale: true,
        staleReason: `segment staff of shop changed on main since: version ${before} → ${before + 1}`,
      });
      expect((await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`)).status).toBe(409);
    });

    it('a segment deletion is stale once a config on main uses the segment', async () => {
      expect((await admin.put(`/api/v1/projects/${project.id}/segments/leaving`, { userIds: ['a'] })).status).toBe(201);
      const proposed = await agent.delete(`/api/v1/projects/${project.id}/segments/leaving`);
      expect(proposed.status).toBe(202);
      const p = proposed.body.proposal;
      const f = await flag();
      const rules = [{ id: 'gone', serve: 'on', conditions: [{ op: 'in_segment', value: 'leaving' }] }];
      expect((await admin.put(`/api/v1/flags/${f.id}/environments/staging/config`, { rules })).status).toBe(200);
      expect((await admin.get(`/api/v1/proposals/${p.id}`)).body).toMatchObject({
        stale: true,
        staleReason: `segment leaving of shop is used on main since by ${f.key} (staging)`,
      });
      const approve = await otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
      expect(approve.status).toBe(409);
      expect(approve.body.error.code).toBe('version_conflict');
    });
  });

  describe('pushes', () => {
    it('an agent key may not push around the review: a protected config, the policy itself, or a proposal branch', async () => {
      const f = await flag();
      const dir = mkdtempSync(path.join(os.tmpdir(), 'flagops-proposal-push-'));
      try {
        const url = `${svc.controlUrl.replace('://', `://engineer:${svc.agent}@`)}/git/acme.git`;
        const checkout = path.join(dir, 'c');
        expect((await gitAsync(dir, 'clone', '--quiet', url, checkout)).ok).toBe(true);
        const head = main();
        const configPath = path.join(checkout, `projects/shop/environments/prod/${f.key}.yaml`);
        writeFileSync(configPath, readFileSync(configPath, 'utf8').replace('rolloutPct: 10', 'rolloutPct: 90'));
        git(checkout, 'commit', '--quiet', '-am', 'raise the rollout');
        const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
        expect(pushed.ok).toBe(false);
        expect(pushed.stderr).toContain('prod requires approval of agent changes');
        git(checkout, 'reset', '--quiet', '--hard', 'origin/main');
        const projectPath = path.join(checkout, 'projects/shop/project.yaml');
        writeFileSync(projectPath, readFileSync(projectPath, 'utf8').replace(/requireApproval:[\s\S]*$/, ''));
        git(checkout, 'commit', '--quiet', '-am', 'drop the review');
        const dropped = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
        expect(dropped.ok).toBe(false);
        expect(dropped.stderr).toContain("may not change a project's settings");
        const branch = await gitAsync(checkout, 'push', 'origin', 'HEAD:refs/heads/proposals/mine');
        expect(branch.ok).toBe(false);
        expect(branch.stderr).toContain('proposal branches are written by the service');
        expect(main()).toBe(head);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      // A clone and three pushes, each with its hook process: more than the default on a loaded machine.
    }, 60_000);
  });

  describe('a commit on a proposal branch that the service did not make', () => {
    /** A commit made straight in the repository on disk, on top of the branch, with the branch's tree. */
    const commitOnBranch = (id: string): string => {
      const ref = `refs/heads/proposals/${id}`;
      const tip = gitDir(svc.gitdir(), 'rev-parse', ref);
      const made = gitDir(
        svc.gitdir(),
        '-c',
        'user.name=Erin',
        '-c',
        'user.email=erin@x',
        'commit-tree',
        `${tip}^{tree}`,
        '-p',
        tip,
        '-m',
        'more',
      );
      gitDir(svc.gitdir(), 'update-ref', ref, made, tip);
      return made;
    };

    it('leaves the proposal as proposed: open and stale, or rejected as it was, with its audit entries', async () => {
      const f = await flag();
      const open = await propose(f, { rolloutPct: 21 });
      const added = commitOnBranch(open.id);
      const shown = await admin.get(`/api/v1/proposals/${open.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body).toMatchObject({ ...open, stale: true });
      expect(shown.body.staleReason).toBe(
        `its branch proposals/${open.id} has a commit the service did not make on top of the proposed change (${added.slice(0, 12)} by Erin), so the branch no longer is the change shown here`,
      );
      const approve = await otherAdmin.post(`/api/v1/proposals/${open.id}/approve`);
      expect([approve.status, approve.body.error.code]).toEqual([409, 'version_conflict']);

      const rejected = await propose(f, { rolloutPct: 22 });
      expect((await admin.post(`/api/v1/proposals/${rejected.id}/reject`, { reason: 'no' })).status).toBe(200);
      const rejection = gitDir(svc.gitdir(), 'rev-parse', `refs/heads/proposals/${rejected.id}`);
      commitOnBranch(rejected.id);
      expect((await admin.get(`/api/v1/proposals/${rejected.id}`)).body).toMatchObject({
        status: 'rejected',
        stale: false,
        commit: rejected.commit,
      });
      const entries = (await admin.get(`/api/v1/audit?flagId=${f.id}&limit=50`)).body.entries as Json[];
      const ids = (proposalId: string) => entries.filter((e) => e.proposalId === proposalId).map((e) => [e.action, e.id]);
      expect(ids(open.id)).toEqual([['proposal_open', open.commit]]);
      expect(ids(rejected.id).sort()).toEqual([
        ['proposal_open', rejected.commit],
        ['proposal_reject', rejection],
      ]);
    });
  });

  describe('reject and list', () => {
    it('reject closes it with a reason; audit has proposal_open and proposal_reject; list filters and orders newest first', async () => {
      const f = await flag();
      const first = await propose(f, { rolloutPct: 40 });
      const second = await propose(f, { rolloutPct: 45 });
      const res = await admin.post(`/api/v1/proposals/${first.id}/reject`, { reason: 'not now' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'rejected', reason: 'not now', decidedBy: { type: 'admin' } });
      const open = (await agent.get(`/api/v1/proposals?status=open&projectId=${project.id}`)).body.proposals;
      expect(open.map((p: Json) => p.id)).toContain(second.id);
      expect(open.every((p: Json) => p.status === 'open')).toBe(true);
      const all = (await admin.get('/api/v1/proposals')).body.proposals;
      const times = all.map((p: Json) => p.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      expect((await admin.get('/api/v1/proposals?status=pending')).status).toBe(400);
      const audit = (await admin.get('/api/v1/audit?action=proposal_reject')).body.entries;
      const rejection = audit.find((e: Json) => e.proposalId === first.id);
      expect(rejection).toMatchObject({ action: 'proposal_reject', flagKey: f.key, environment: 'prod' });
      expect(rejection.id).not.toBe(first.commit);
      const opened = (await admin.get('/api/v1/audit?action=proposal_open&limit=500')).body.entries;
      expect(opened.map((e: Json) => e.id)).toEqual(expect.arrayContaining([first.commit, second.commit]));
    });

    it('an agent’s segment change becomes a proposal where the project requires its approval anywhere', async () => {
      const res = await agent.put(`/api/v1/projects/${project.id}/segments/beta`, { userIds: ['a'] });
      expect(res.status).toBe(202);
      expect(res.body.proposal).toMatchObject({ action: 'segment_update', segmentKey: 'beta', flagKey: null, environment: null });
      expect((await admin.get(`/api/v1/projects/${project.id}/segments/beta`)).status).toBe(404);
    });

    it('proposals are ordinary branches over /git and survive a restart', async () => {
      const f = await flag();
      const p = await propose(f, { rolloutPct: 33 });
      const repoUrl = `${svc.controlUrl.replace('://', `://x:${svc.admin}@`)}/git/acme.git`;
      const { stdout } = await execFileAsync('git', ['ls-remote', repoUrl], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
      expect(stdout).toContain(`refs/heads/proposals/${p.id}`);
      await svc.restart();
      const fresh = httpClient(svc.controlUrl, svc.admin);
      expect((await fresh.get(`/api/v1/proposals/${p.id}`)).body).toEqual(p);
      admin = fresh;
      agent = httpClient(svc.controlUrl, svc.agent);
      otherAdmin = httpClient(svc.controlUrl, (await admin.post('/api/v1/keys', { kind: 'admin' })).body.key);
    }, 60_000);
  });

  describe('approve and reject at once', () => {
    it('one decision wins, the other answers 409 conflict; the status, what is served and the audit trail agree', async () => {
      for (let round = 0; round < 4; round++) {
        const f = await flag();
        const p = await propose(f, { rolloutPct: 20 });
        const approve = () => otherAdmin.post(`/api/v1/proposals/${p.id}/approve`);
        const reject = () => admin.post(`/api/v1/proposals/${p.id}/reject`, { reason: 'no' });
        // Sent in either order: either decision may come first.
        const [approved, rejected] =
          round % 2 === 0 ? await Promise.all([approve(), reject()]) : (await Promise.all([reject(), approve()])).reverse();
        expect([approved.status, rejected.status].sort()).toEqual([200, 409]);
        const merged = approved.status === 200;
        const loser = merged ? rejected : approved;
        expect(loser.body.error.code).toBe('conflict');
        expect((merged ? approved : rejected).body.status).toBe(merged ? 'merged' : 'rejected');
        expect((await admin.get(`/api/v1/proposals/${p.id}`)).body.status).toBe(merged ? 'merged' : 'rejected');
        expect((await admin.get(`/api/v1/flags/${f.id}`)).body.environments.prod.rolloutPct).toBe(merged ? 20 : 10);
        const entries = (await admin.get(`/api/v1/audit?flagId=${f.id}&limit=20`)).body.entries as Json[];
        const decisions = entries.filter((e) => e.proposalId === p.id && e.action !== 'proposal_open').map((e) => e.action);
        expect(decisions).toEqual([merged ? 'config_update' : 'proposal_reject']);
      }
    });
  });

  async function sdkKey(): Promise<string> {
    const res = await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' });
    return res.body.key;
  }
});

describe('approving with another hand-made key whose prefix is the proposer’s', () => {
  // Two bootstrap admin keys whose first 8 characters after the kind prefix agree: one prefix, two keys.
  const first = 'svc_adm_sameprefix00000000000000000000000001';
  const second = 'svc_adm_sameprefix00000000000000000000000002';
  const prefix = first.slice(0, 16);
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let n = 0;

  const flag = (): Promise<Json> => createFlag(admin, project.id, { key: `banner-${++n}` });

  beforeAll(async () => {
    svc = await startTestService({
      moreBootstrapKeys: [
        { org: 'acme', key: first },
        { org: 'acme', key: second },
      ],
    });
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    expect((await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['admin'] } })).status).toBe(200);
  }, 60_000);
  afterAll(() => svc.stop());

  it('is another credential: it approves, while the proposing key and a rotation of it may not', async () => {
    // Listed oldest first: the two in the order FLAGOPS_BOOTSTRAP_KEYS gives them.
    const [firstKey, secondKey] = ((await admin.get('/api/v1/keys')).body.keys as Json[]).filter((k) => k.prefix === prefix);
    expect(firstKey.id).not.toBe(secondKey.id);
    const f = await flag();
    const proposed = await httpClient(svc.controlUrl, first).put(`/api/v1/flags/${f.id}/environments/prod/config`, { rolloutPct: 35 });
    expect(proposed.status).toBe(202);
    const id = proposed.body.proposal.id;
    expect(proposed.body.proposal.proposedBy).toEqual({ type: 'admin', name: 'bootstrap', keyPrefix: prefix });

    const own = await httpClient(svc.controlUrl, first).post(`/api/v1/proposals/${id}/approve`);
    expect(own.status).toBe(403);
    expect(own.body.error.message).toContain('may not approve it');
    const rotated = await admin.post(`/api/v1/keys/${firstKey.id}/rotate`, { graceSeconds: 600 });
    expect(rotated.status).toBe(201);
    expect((await httpClient(svc.controlUrl, rotated.body.key).post(`/api/v1/proposals/${id}/approve`)).status).toBe(403);
    const approved = await httpClient(svc.controlUrl, second).post(`/api/v1/proposals/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'merged', decidedBy: { type: 'admin', name: 'bootstrap', keyPrefix: prefix } });
    // The old key, still in its grace, may not approve what its rotation proposes either.
    const other = await flag();
    const byRotation = await httpClient(svc.controlUrl, rotated.body.key).put(`/api/v1/flags/${other.id}/environments/prod/config`, {
      rolloutPct: 45,
    });
    expect(byRotation.status).toBe(202);
    expect((await httpClient(svc.controlUrl, first).post(`/api/v1/proposals/${byRotation.body.proposal.id}/approve`)).status).toBe(403);
  });

  /** A proposal as the service wrote a key's before it recorded the key's id: the key's prefix, and no id. */
  async function proposalWithoutKeyId(id: string, keyPrefix: string, rolloutPct: number): Promise<Json> {
    const f = await flag();
    const file = `projects/shop/environments/prod/${f.key}.yaml`;
    const before = gitDir(svc.gitdir(), 'show', `main:${file}`);
    const content = `${before
      .replace(/^rolloutPct: 0$/m, `rolloutPct: ${rolloutPct}`)
      .replace(/^version: (\d+)$/m, (_line, v: string) => `version: ${Number(v) + 1}`)}\n`;
    const repo = await svc.service.repos.get('acme');
    await repo.commitOnNewBranch(`refs/heads/proposals/${id}`, async () => ({
      changes: [{ path: file, content }],
      meta: {
        action: 'config_update',
        summary: `propose: update ${f.key} in prod`,
        actor: { type: 'admin', name: 'bootstrap', keyPrefix },
        project: 'shop',
        flag: f.key,
        environment: 'prod',
        proposal: { id },
      },
      result: null,
    }));
    return f;
  }

  it('a proposal made before proposals recorded the key’s id reads as before, and its proposer’s prefix is still refused', async () => {
    const f = await proposalWithoutKeyId('madebefore01', prefix, 55);
    const read = await admin.get('/api/v1/proposals/madebefore01');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'open', stale: false, proposedBy: { type: 'admin', keyPrefix: prefix } });
    expect(read.body.changes).toEqual([`shop/${f.key} prod: rolloutPct 0 → 55`]);
    expect((await httpClient(svc.controlUrl, first).post('/api/v1/proposals/madebefore01/approve')).status).toBe(403);
    expect((await admin.post('/api/v1/proposals/madebefore01/approve')).status).toBe(200);

    // Made by a rotation of a key: neither that rotation nor the old key in its grace may approve it.
    const created = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'rotated' })).body;
    const rotated = (await admin.post(`/api/v1/keys/${created.id}/rotate`, { graceSeconds: 600 })).body;
    await proposalWithoutKeyId('madebefore02', rotated.prefix, 65);
    expect((await httpClient(svc.controlUrl, rotated.key).post('/api/v1/proposals/madebefore02/approve')).status).toBe(403);
    expect((await httpClient(svc.controlUrl, created.key).post('/api/v1/proposals/madebefore02/approve')).status).toBe(403);
    expect((await admin.post('/api/v1/proposals/madebefore02/approve')).status).toBe(200);
  });
});
