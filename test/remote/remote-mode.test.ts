import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { gitAsync } from '../git-http/git-async.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { remoteConfig, startGitServer } from './git-server.js';

const SECRET = 'a-long-shared-webhook-secret';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('remote mode: an outside git repository is the source of truth (FLAGOPS_GIT_REMOTE)', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let service: Service;
  let admin: HttpClient;
  let project: Json;
  let work: string;
  const adminKey = generateKey('admin');
  let config: Config;

  /** An engineer's commit pushed straight to the git host, as a merged pull request would land. */
  async function outsideCommit(edit: (checkout: string) => void, message: string): Promise<string> {
    const checkout = path.join(work, `c-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
    edit(checkout);
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', message);
    expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:main')).ok).toBe(true);
    return git(checkout, 'rev-parse', 'HEAD');
  }
  /** Sets a flag file's display name, as an engineer's edit would. */
  function rename(file: string, name: string): void {
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, /^name: .*$/m.test(text) ? text.replace(/^name: .*$/m, `name: ${name}`) : `${text}name: ${name}\n`);
  }
  const remoteFile = (file: string) => git(host.gitdir, 'show', `main:${file}`);
  /**
   * Kills a flag in prod and waits until the git host has the kill. One the host does not take within 0.5 s (a
   * busy machine) is answered all the same and held, pushed meanwhile; what a test does next assumes the host has it.
   */
  async function killOnHost(flagId: string, reason: string): Promise<void> {
    expect((await admin.post(`/api/v1/flags/${flagId}/environments/prod/kill`, { reason })).status).toBe(200);
    await until(
      async () => (await admin.get('/healthz')).body.gitRemote,
      (remote) => remote.holdingKills === false,
    );
  }
  /** The git host's webhook, as it calls the service after a push. */
  const gitHook = () =>
    httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
      rawBody: '{}',
    });

  beforeAll(async () => {
    host = await startGitServer();
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-remote-work-'));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-remote-'));
    config = {
      dataDir,
      host: '127.0.0.1',
      controlPort: 0,
      evalPort: 0,
      bootstrapKeys: [{ org: 'acme', key: adminKey }],
      planProjectLimit: 25,
      logLevel: 'error',
      gitRemote: { url: host.url, webhookSecret: SECRET, pollSeconds: 0 }, // no polling: the race below must hit the push
    };
    service = await startService(config, silentLogger);
    admin = httpClient(service.controlUrl, adminKey);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
  });
  afterAll(async () => {
    await service.stop(); // stopping twice is a no-op
    await host.stop();
    await rm(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('pushes every control-plane commit to the remote', async () => {
    expect(project.slug).toBe('shop');
    expect(remoteFile('projects/shop/project.yaml')).toContain('slug: shop');
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));
  });

  it('pushes proposal branches to the remote, and their rejection too', async () => {
    await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['admin'] } });
    try {
      const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'reviewed' })).body;
      const proposed = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 5 });
      expect(proposed.status).toBe(202);
      const ref = `refs/heads/proposals/${proposed.body.proposal.id}`;
      expect(git(host.gitdir, 'rev-parse', ref)).toBe(proposed.body.proposal.commit);
      const rejected = await admin.post(`/api/v1/proposals/${proposed.body.proposal.id}/reject`);
      expect(rejected.status).toBe(200);
      expect(git(host.gitdir, 'rev-parse', ref)).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', ref));
      expect(git(host.gitdir, 'rev-parse', `${ref}^`)).toBe(proposed.body.proposal.commit);
    } finally {
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: null });
    }
  });

  it('keeps a proposal whose branch gained a commit on the git host: shown as proposed, not approvable, rejectable, in the audit trail', async () => {
    await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['admin'] } });
    try {
      const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'altered-on-host' })).body;
      const proposed = (await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 5 })).body.proposal;
      const ref = `refs/heads/proposals/${proposed.id}`;
      const hostMain = git(host.gitdir, 'rev-parse', 'main');
      // Someone with access to the git host adds a commit to the proposal branch.
      const checkout = path.join(work, `alter-${proposed.id}`);
      expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
      git(checkout, 'checkout', '--quiet', '-B', 'alter', `origin/proposals/${proposed.id}`);
      const file = path.join(checkout, 'projects/shop/environments/prod/altered-on-host.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('rolloutPct: 5', 'rolloutPct: 99'));
      git(checkout, 'commit', '--quiet', '-am', 'a commit on the proposal branch');
      expect((await gitAsync(checkout, 'push', '--quiet', 'origin', `HEAD:${ref}`)).ok).toBe(true);
      const added = git(checkout, 'rev-parse', 'HEAD');
      expect((await gitHook()).status).toBe(202);
      expect(git(service.repos.gitdirOf('acme'), 'rev-parse', ref)).toBe(added);

      // Still there, as of the service's own commit, and stale for its branch.
      const shown = await admin.get(`/api/v1/proposals/${proposed.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body).toMatchObject({
        id: proposed.id,
        status: 'open',
        stale: true,
        commit: proposed.commit,
        changes: proposed.changes,
      });
      expect(shown.body.staleReason).toContain(`proposals/${proposed.id}`);
      expect(shown.body.staleReason).toContain(added.slice(0, 12));
      const open = (await admin.get('/api/v1/proposals?status=open')).body.proposals;
      expect(open.find((p: Json) => p.id === proposed.id)).toMatchObject({ stale: true, commit: proposed.commit });
      const opened = async () =>
        (await admin.get('/api/v1/audit?action=proposal_open&limit=100')).body.entries.filter((e: Json) => e.proposalId === proposed.id);
      expect(await opened()).toEqual([expect.objectContaining({ id: proposed.commit })]);

      // Approving is refused, and merges nothing.
      const reviewer = httpClient(service.controlUrl, (await admin.post('/api/v1/keys', { kind: 'admin', name: 'reviewer' })).body.key);
      const approved = await reviewer.post(`/api/v1/proposals/${proposed.id}/approve`);
      expect(approved.status).toBe(409);
      expect(approved.body.error.code).toBe('version_conflict');
      expect(approved.body.error.message).toContain(`proposal ${proposed.id} is stale: `);
      expect(approved.body.error.message).toContain(added.slice(0, 12));
      expect(git(host.gitdir, 'rev-parse', 'main')).toBe(hostMain);
      expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.rolloutPct).not.toBe(99);

      // Nor does a push through the service's /git decide it: the service's commit is no longer the branch's head.
      const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
      const viaService = path.join(work, `via-${proposed.id}`);
      expect((await gitAsync(work, 'clone', '--quiet', url, viaService)).ok).toBe(true);
      git(viaService, 'merge', '--quiet', '--no-ff', '-m', 'merge the proposal', `origin/proposals/${proposed.id}`);
      const mergePush = await gitAsync(viaService, 'push', 'origin', 'HEAD:main');
      expect(mergePush.ok).toBe(false);
      expect(mergePush.stderr).toContain(`commit ${proposed.commit.slice(0, 12)}: its message carries a Flagops-`);
      expect(git(host.gitdir, 'rev-parse', 'main')).toBe(hostMain);

      // Rejecting works: its commit goes on the branch as the host has it, and both entries are in the audit trail.
      const rejected = await admin.post(`/api/v1/proposals/${proposed.id}/reject`, { reason: 'altered' });
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({ status: 'rejected', stale: false, commit: proposed.commit, rejectionReason: 'altered' });
      const rejection = git(host.gitdir, 'rev-parse', ref);
      expect(git(host.gitdir, 'rev-parse', `${ref}^`)).toBe(added);
      expect(await opened()).toEqual([expect.objectContaining({ id: proposed.commit })]);
      const rejections = (await admin.get('/api/v1/audit?action=proposal_reject&limit=100')).body.entries.filter(
        (e: Json) => e.proposalId === proposed.id,
      );
      expect(rejections).toEqual([expect.objectContaining({ id: rejection, reason: 'altered' })]);
      expect(git(host.gitdir, 'rev-parse', 'main')).toBe(hostMain);
    } finally {
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: null });
    }
    // Two clones and a push with its hook process: more than the default on a loaded machine.
  }, 90_000);

  it('marks a proposal merged when the git host merges its branch into main, or squashes it onto main', async () => {
    await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['admin'] } });
    try {
      const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'merged-on-host' })).body;
      const propose = async (rolloutPct: number) => {
        const res = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct });
        expect(res.status).toBe(202);
        return res.body.proposal.id as string;
      };
      const hook = () =>
        httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
          headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
          rawBody: '{"ref":"refs/heads/main"}',
        });
      /** An engineer merges the proposal branch on the git host (`merge` or `merge --squash`) and pushes main. */
      const mergeOnHost = async (id: string, how: string[]): Promise<string> => {
        const checkout = path.join(work, `merge-${id}`);
        expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
        git(checkout, 'merge', '--quiet', ...how, `origin/proposals/${id}`);
        if (how.includes('--squash')) git(checkout, 'commit', '--quiet', '-m', `squash proposal ${id}`);
        expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:main')).ok).toBe(true);
        expect((await hook()).status).toBe(202);
        return git(checkout, 'rev-parse', 'HEAD');
      };

      const merged = await propose(5);
      // Main moves meanwhile, so the merge is a merge commit.
      expect((await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'beside-the-merge' })).status).toBe(201);
      const mergeCommit = await mergeOnHost(merged, ['--no-ff', '-m', 'merge the proposal']);
      expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.rolloutPct).toBe(5);
      expect((await admin.get(`/api/v1/proposals/${merged}`)).body).toMatchObject({
        status: 'merged',
        stale: false,
        mergedAs: mergeCommit,
        decidedBy: { type: 'git', name: 'Erin Engineer' },
      });
      const approved = await admin.post(`/api/v1/proposals/${merged}/approve`);
      expect([approved.status, approved.body.error?.message]).toEqual([409, `proposal ${merged} is merged already`]);

      const squashed = await propose(15);
      const squashCommit = await mergeOnHost(squashed, ['--squash']);
      expect((await admin.get(`/api/v1/proposals/${squashed}`)).body).toMatchObject({ status: 'merged', mergedAs: squashCommit });
      const listed = (await admin.get('/api/v1/proposals?status=merged')).body.proposals.map((p: Json) => p.id);
      expect(listed).toEqual(expect.arrayContaining([merged, squashed]));
      // A later change of the config on main leaves them merged.
      const file = 'projects/shop/environments/prod/merged-on-host.yaml';
      await outsideCommit((checkout) => {
        writeFileSync(
          path.join(checkout, file),
          readFileSync(path.join(checkout, file), 'utf8').replace('rolloutPct: 15', 'rolloutPct: 20'),
        );
      }, 'raise merged-on-host');
      expect((await hook()).status).toBe(202);
      expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod.rolloutPct).toBe(20);
      expect((await admin.get(`/api/v1/proposals/${squashed}`)).body).toMatchObject({ status: 'merged', mergedAs: squashCommit });
    } finally {
      await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: null });
    }
  });

  it('keeps both changes when an outside commit lands between fetch and push', async () => {
    const a = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'outside-edit' })).body;
    const b = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'api-edit' })).body;
    // The outside commit reaches the remote only; the service hears nothing of it (no webhook, before a poll).
    await outsideCommit((checkout) => {
      rename(path.join(checkout, 'projects/shop/flags/outside-edit.yaml'), 'Renamed outside');
    }, 'rename outside-edit in a pull request');
    const res = await admin.put(`/api/v1/flags/${b.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    expect(res.status).toBe(200);
    expect(remoteFile('projects/shop/flags/outside-edit.yaml')).toContain('name: Renamed outside');
    expect(remoteFile('projects/shop/environments/prod/api-edit.yaml')).toContain('enabled: true');
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));
    expect((await admin.get(`/api/v1/flags/${a.id}`)).body.name).toBe('Renamed outside');
    // History is linear: the API change was made again on top of the outside commit.
    expect(git(host.gitdir, 'log', '--format=%s', '-2', 'main').split('\n')[1]).toBe('rename outside-edit in a pull request');
  });

  it('picks up a merged pull request at once through the webhook', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'hooked' })).body;
    const pushed = await outsideCommit((checkout) => {
      rename(path.join(checkout, 'projects/shop/flags/hooked.yaml'), 'From the hook');
    }, 'rename hooked');
    const wrong = await httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': 'nope' },
    });
    expect(wrong.status).toBe(401);
    const hook = await httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
      rawBody: '{"ref":"refs/heads/main"}',
    });
    expect(hook.status).toBe(202);
    expect(hook.body.outcome).toBe('fast-forwarded');
    expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(pushed);
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.name).toBe('From the hook');
  });

  it('keeps the audit trail when main was merged into a branch pushed as main on the host (first-parent line kept)', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'foxtrot' })).body;
    // An engineer's branch from main as it is now…
    const checkout = path.join(work, 'foxtrot');
    expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
    rename(path.join(checkout, 'projects/shop/flags/foxtrot.yaml'), 'From the branch');
    git(checkout, 'commit', '--quiet', '-am', 'rename foxtrot on a branch');
    // …main moves meanwhile (a kill through the API)…
    await killOnHost(flag.id, 'on call');
    const killed = git(host.gitdir, 'rev-parse', 'main');
    // …and the engineer merges main into the branch and pushes the branch as main: main's old head is now its second parent.
    expect((await gitAsync(checkout, 'pull', '--quiet', '--no-rebase', '--no-edit', 'origin', 'main')).ok).toBe(true);
    expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:main')).ok).toBe(true);
    const hook = await httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
      rawBody: '{"ref":"refs/heads/main"}',
    });
    expect(hook.status).toBe(202);
    const gitdir = service.repos.gitdirOf('acme');
    // The engineer's change is served, the kill is still on main's first-parent line, and the host has the same main.
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body).toMatchObject({ name: 'From the branch' });
    expect(git(gitdir, 'rev-list', '--first-parent', 'main').split('\n')).toContain(killed);
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(gitdir, 'rev-parse', 'main'));
    // The audit trail reads main's new commits as they arrive: the engineer's change comes first, the kill stays.
    const latest = await until(
      async () => (await admin.get(`/api/v1/audit?flagId=${flag.id}&limit=1`)).body.entries[0],
      (entry) => entry?.action === 'flag_update',
    );
    expect(latest).toMatchObject({ action: 'flag_update', actor: { type: 'git' } });
    const kills = (await admin.get(`/api/v1/audit?action=kill&flagId=${flag.id}`)).body.entries;
    expect(kills).toEqual([expect.objectContaining({ id: killed, actor: expect.objectContaining({ type: 'admin' }), reason: 'on call' })]);
  });

  it('moves the version of a config a merged pull request changed without raising it: a write read before it is 409', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'versioned-remotely' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 75 });
    const read = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    expect(read).toMatchObject({ rolloutPct: 75, version: 2 });
    const file = 'projects/shop/environments/prod/versioned-remotely.yaml';
    await outsideCommit((checkout) => {
      const text = readFileSync(path.join(checkout, file), 'utf8');
      writeFileSync(path.join(checkout, file), text.replace('rolloutPct: 75', 'rolloutPct: 40'));
    }, 'lower the rollout, version left as it was');
    const hook = await httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
      rawBody: '{"ref":"refs/heads/main"}',
    });
    expect(hook.body.outcome).toBe('fast-forwarded');
    expect(remoteFile(file)).toContain('version: 2');
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toMatchObject({ rolloutPct: 40, version: 3 });
    const stale = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 10, expectedVersion: read.version });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('version_conflict');
    expect(remoteFile(file)).toContain('rolloutPct: 40');
  });

  it("checks a clear's expectedVersion against the git host's main: a change pushed there first makes it 409, and the kill stays", async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'cleared-after-host' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    // On the host: a kill it is slow to take is held, and a clear behind it is checked against main here.
    await killOnHost(flag.id, 'incident');
    const file = 'projects/shop/environments/prod/cleared-after-host.yaml';
    for (const body of [{}, { enabled: true }]) {
      const read = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
      expect(read.killed).toBe(true);
      // An engineer's change to the killed flag reaches the host; no webhook, no poll: the service has not seen it.
      const rolloutPct = read.rolloutPct - 10;
      await outsideCommit((checkout) => {
        const text = readFileSync(path.join(checkout, file), 'utf8');
        writeFileSync(path.join(checkout, file), text.replace(/rolloutPct: \d+/, `rolloutPct: ${rolloutPct}`));
      }, 'lower the rollout of a killed flag');
      const cleared = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
        ...body,
        clearKill: true,
        expectedVersion: read.version,
      });
      expect([cleared.status, cleared.body.error?.code], JSON.stringify(cleared.body)).toEqual([409, 'version_conflict']);
      // The host's change is served, still killed; the host has no clear.
      const now = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
      expect(now).toMatchObject({ killed: true, rolloutPct });
      expect(now.version).toBeGreaterThan(read.version);
      expect(git(host.gitdir, 'log', '-1', '--format=%s', 'main')).toBe('lower the rollout of a killed flag');
    }
    const now = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    const cleared = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true, expectedVersion: now.version });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.environments.prod).toMatchObject({ killed: false, version: now.version });
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main'));
  }, 60_000);

  it("checks a clear's expectedVersion on the git host's main also when the host is slow to answer", async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'cleared-on-slow-host' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    await killOnHost(flag.id, 'incident');
    const read = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    const file = 'projects/shop/environments/prod/cleared-on-slow-host.yaml';
    await outsideCommit((checkout) => {
      const text = readFileSync(path.join(checkout, file), 'utf8');
      writeFileSync(path.join(checkout, file), text.replace(/rolloutPct: \d+/, 'rolloutPct: 50'));
    }, 'halve the rollout of a killed flag');
    // Every request answered 0.6 s late: the clear's push is not answered within the 0.5 s a kill waits.
    host.slow(600);
    try {
      const cleared = await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
        clearKill: true,
        expectedVersion: read.version,
      });
      expect([cleared.status, cleared.body.error?.code], JSON.stringify(cleared.body)).toEqual([409, 'version_conflict']);
    } finally {
      host.slow(0);
    }
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toMatchObject({ killed: true, rolloutPct: 50 });
    expect(git(host.gitdir, 'log', '-1', '--format=%s', 'main')).toBe('halve the rollout of a killed flag');
  }, 60_000);

  it('holds back only the flag of an invalid file arriving from the git host; everything else is served and pushed', async () => {
    const broken = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'broken-remotely' })).body;
    const other = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'still-fine' })).body;
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const file = 'projects/shop/environments/prod/broken-remotely.yaml';
    const hook = gitHook;
    await outsideCommit(
      (checkout) => writeFileSync(path.join(checkout, file), 'enabled: true\nrolloutPct: 250\n'),
      'a broken rollout, merged on the host',
    );
    expect((await hook()).body.outcome).toBe('fast-forwarded');

    const held = (await admin.get(`/api/v1/flags/${broken.id}`)).body;
    expect(held.invalidFiles.length).toBeGreaterThan(0);
    expect(held.invalidFiles.every((entry: Json) => entry.file === file)).toBe(true);
    expect(held.environments.prod).toMatchObject({ enabled: false, rolloutPct: 0 });
    expect((await admin.put(`/api/v1/flags/${broken.id}/environments/prod/config`, { enabled: true })).body.error.code).toBe(
      'invalid_in_repository',
    );
    const change = await admin.put(`/api/v1/flags/${other.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    expect(change.status).toBe(200);
    expect(remoteFile('projects/shop/environments/prod/still-fine.yaml')).toContain('rolloutPct: 100');
    const served = (await httpClient(service.evalUrl, sdk).post('/v1/evaluate', { keys: ['broken-remotely', 'still-fine'] })).body;
    expect(served['still-fine']).toMatchObject({ value: true });
    expect(served['broken-remotely']).toMatchObject({ value: false, reason: 'flag_disabled' });

    await outsideCommit(
      (checkout) => writeFileSync(path.join(checkout, file), 'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\nversion: 2\n'),
      'fix the rollout',
    );
    expect((await hook()).body.outcome).toBe('fast-forwarded');
    expect((await admin.get(`/api/v1/flags/${broken.id}`)).body).not.toHaveProperty('invalidFiles');
  }, 60_000);

  it('holds back a flag whose file from the git host is over 1 MiB, as a push here would be refused, naming its size', async () => {
    const big = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'too-big-remotely' })).body;
    const file = 'projects/shop/flags/too-big-remotely.yaml';
    await outsideCommit(
      (checkout) => writeFileSync(path.join(checkout, file), `key: too-big-remotely\ndescription: ${'x'.repeat(1024 * 1024)}\n`),
      'a long description, merged on the host',
    );
    const hook = await gitHook();
    expect(hook.body.outcome).toBe('fast-forwarded');
    const held = (await admin.get(`/api/v1/flags/${big.id}`)).body;
    expect(held.invalidFiles).toEqual([{ file, line: null, message: '1.0 MiB is over the limit of 1 MiB per file' }]);

    await outsideCommit((checkout) => writeFileSync(path.join(checkout, file), 'key: too-big-remotely\n'), 'a short description');
    await gitHook();
    expect((await admin.get(`/api/v1/flags/${big.id}`)).body).not.toHaveProperty('invalidFiles');
  });

  it('passes a push to /git/<org>.git on to the remote at once, with no poll and no webhook', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'pushed-here' })).body;
    const checkout = path.join(work, 'through-flagops');
    const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
    rename(path.join(checkout, 'projects/shop/flags/pushed-here.yaml'), 'Pushed to flagops');
    git(checkout, 'commit', '--quiet', '-am', 'rename pushed-here through flagops');
    expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:main')).ok).toBe(true);
    const pushed = git(checkout, 'rev-parse', 'HEAD');
    const started = Date.now();
    while (git(host.gitdir, 'rev-parse', 'main') !== pushed && Date.now() - started < 10_000) await sleep(50);
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(pushed);
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.name).toBe('Pushed to flagops');
  });

  it('refuses a push to /git/<org>.git the remote cannot take (down, or moved on), changing nothing here or there', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'pushed-while-down' })).body;
    const checkout = path.join(work, 'while-down');
    const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
    rename(path.join(checkout, 'projects/shop/flags/pushed-while-down.yaml'), 'Pushed while down');
    git(checkout, 'commit', '--quiet', '-am', 'rename while the host is down');
    const local = () => git(service.repos.gitdirOf('acme'), 'rev-parse', 'main');
    const before = local();
    await host.down();
    try {
      const refused = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
      expect(refused.ok).toBe(false);
      expect(refused.stderr).toContain('did not take the push');
      expect(refused.stderr).toContain('nothing was changed');
      expect(local()).toBe(before);
    } finally {
      await host.up();
    }
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(before);
    // The remote moves on without this control plane hearing of it (no poll, no webhook): the push is refused too.
    const outside = await outsideCommit(
      (c) => rename(path.join(c, 'projects/shop/flags/pushed-while-down.yaml'), 'Renamed outside'),
      'outside',
    );
    const moved = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(moved.ok).toBe(false);
    expect(moved.stderr).toContain('has changes main here does not have yet');
    expect(local()).toBe(before);
    expect(git(host.gitdir, 'rev-parse', 'main')).toBe(outside);
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.name).not.toBe('Pushed while down');
  });

  it("refuses a push to /git/<org>.git that the git host refuses (a protected branch), with the host's own words", async () => {
    await gitHook(); // main up to the remote first
    const checkout = path.join(work, 'host-refuses');
    const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
    git(checkout, 'commit', '--quiet', '--allow-empty', '-m', 'pushed to a protected main');
    const before = git(service.repos.gitdirOf('acme'), 'rev-parse', 'main');
    const hookFile = path.join(host.gitdir, 'hooks', 'pre-receive');
    writeFileSync(hookFile, '#!/bin/sh\necho "branch protection: main is protected" >&2\nexit 1\n', { mode: 0o755 });
    try {
      const refused = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
      expect(refused.ok).toBe(false);
      expect(refused.stderr).toContain('refused the push: branch protection: main is protected');
      expect(refused.stderr).not.toContain('when it is back');
      expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(before);
    } finally {
      rmSync(hookFile);
    }
  });

  it('says in /healthz that main and the remote have diverged, until they no longer have', async () => {
    const hook = gitHook;
    await hook(); // main up to the remote first
    const head = git(host.gitdir, 'rev-parse', 'main');
    expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(head);
    // Someone rewrites the remote's last commit (a force push): the same tree, another commit.
    const rewritten = git(host.gitdir, 'commit-tree', `${head}^{tree}`, '-p', `${head}^`, '-m', 'rewritten on the host');
    git(host.gitdir, 'update-ref', 'refs/heads/main', rewritten);
    try {
      expect((await hook()).body.outcome).toBe('diverged');
      const health = (await admin.get('/healthz')).body;
      expect(health.status).toBe('degraded');
      expect(health.gitRemote).toMatchObject({ reachable: true, diverged: true });
      expect(health.gitRemote.error).toContain('have diverged');
      // A push through the service is refused saying so, not with advice to rebase that could never work.
      const checkout = path.join(work, 'while-diverged');
      const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
      expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
      git(checkout, 'commit', '--quiet', '--allow-empty', '-m', 'pushed while diverged');
      const refused = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
      expect(refused.ok).toBe(false);
      expect(refused.stderr).toContain('have diverged');
      expect(refused.stderr).not.toContain('rebase on main');
      expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(head);
    } finally {
      git(host.gitdir, 'update-ref', 'refs/heads/main', head);
    }
    expect((await hook()).body.outcome).toBe('unchanged');
    const health = (await admin.get('/healthz')).body;
    expect(health.status).toBe('ok');
    expect(health.gitRemote).toMatchObject({ diverged: false });
  });

  it.each(['moved back a commit', 'deleted'])(
    'says in /healthz that the remote has diverged when its main is %s on the host, rather than push main over it',
    async (how) => {
      const hook = gitHook;
      await hook(); // main up to the remote first
      const head = git(host.gitdir, 'rev-parse', 'main');
      expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(head);
      // A host admin takes the last change off main (a force push), or deletes main.
      if (how === 'deleted') git(host.gitdir, 'update-ref', '-d', 'refs/heads/main');
      else git(host.gitdir, 'update-ref', 'refs/heads/main', `${head}^`);
      try {
        expect((await hook()).body.outcome).toBe('diverged');
        expect((await hook()).body.outcome).toBe('diverged');
        const health = (await admin.get('/healthz')).body;
        expect(health.status).toBe('degraded');
        expect(health.gitRemote).toMatchObject({ reachable: true, diverged: true });
        expect(health.gitRemote.error).toContain("the git remote's main went back");
        // Not pushed again: what the host's admin took off stays off.
        if (how === 'deleted') expect(() => git(host.gitdir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main')).toThrow();
        else expect(git(host.gitdir, 'rev-parse', 'main')).toBe(git(host.gitdir, 'rev-parse', `${head}^`));
      } finally {
        git(host.gitdir, 'update-ref', 'refs/heads/main', head);
      }
      expect((await hook()).body.outcome).toBe('unchanged');
      expect((await admin.get('/healthz')).body.gitRemote).toMatchObject({ diverged: false });
    },
  );

  it.each(['kill', 'clear'])(
    'says in /healthz that the remote has diverged when a force-push on the host drops a %s it had and adds other commits, also after a restart',
    async (what) => {
      const hook = gitHook;
      const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: `dropped-${what}` })).body;
      await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
      expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'to be taken off' })).status).toBe(200);
      if (what === 'clear')
        expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true })).status).toBe(200);
      const gitdir = service.repos.gitdirOf('acme');
      // On the host (a busy host may take it after the answer: pushed meanwhile).
      const dropped = git(gitdir, 'rev-parse', 'main');
      await until(
        async () => git(host.gitdir, 'rev-parse', 'main'),
        (head) => head === dropped,
      );
      const entry = (await admin.get('/api/v1/audit?limit=1')).body.entries[0];
      expect(entry).toMatchObject({ id: dropped, action: what === 'kill' ? 'kill' : 'clear_kill' });
      // A host admin rewrites main without it, with an engineer's change on top (a force push).
      const checkout = path.join(work, `drop-${what}`);
      expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
      git(checkout, 'reset', '--quiet', '--hard', 'HEAD^');
      rename(path.join(checkout, `projects/shop/flags/dropped-${what}.yaml`), 'Rewritten on the host');
      git(checkout, 'commit', '--quiet', '-am', `rewrite main without the ${what}`);
      const rewritten = git(checkout, 'rev-parse', 'HEAD');
      expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:refs/heads/rewrite')).ok).toBe(true);
      git(host.gitdir, 'update-ref', 'refs/heads/main', rewritten);
      const diverged = async () => {
        const health = (await admin.get('/healthz')).body;
        expect(health.status).toBe('degraded');
        expect(health.gitRemote).toMatchObject({ reachable: true, diverged: true });
        expect(health.gitRemote.error).toContain('have diverged');
        expect(health.gitRemote.error).toContain(dropped.slice(0, 12));
        // Nothing rewritten or made again: main keeps the commit and its audit entry, the host keeps its rewrite.
        expect(git(gitdir, 'rev-parse', 'main')).toBe(dropped);
        expect(git(host.gitdir, 'rev-parse', 'main')).toBe(rewritten);
        expect((await admin.get('/api/v1/audit?limit=1')).body.entries[0].id).toBe(dropped);
        const refused = await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 5 });
        expect([refused.status, refused.body.error?.code]).toEqual([503, 'unavailable']);
        expect(git(host.gitdir, 'rev-parse', 'main')).toBe(rewritten);
      };
      try {
        expect((await hook()).body.outcome).toBe('diverged');
        expect((await hook()).body.outcome).toBe('diverged');
        await diverged();
        await service.stop();
        service = await startService(config, silentLogger);
        admin = httpClient(service.controlUrl, adminKey);
        expect((await hook()).body.outcome).toBe('diverged');
        await diverged();
      } finally {
        git(host.gitdir, 'update-ref', 'refs/heads/main', dropped);
        git(host.gitdir, 'update-ref', '-d', 'refs/heads/rewrite');
      }
      expect((await hook()).body.outcome).toBe('unchanged');
      expect((await admin.get('/healthz')).body.gitRemote).toMatchObject({ diverged: false });
    },
  );

  it('picks up an outside commit by polling when no webhook comes (FLAGOPS_GIT_POLL_SECONDS)', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'polled' })).body;
    await service.stop();
    const polling = await startService({ ...config, gitRemote: { url: host.url, pollSeconds: 1 } }, silentLogger);
    try {
      const pushed = await outsideCommit((checkout) => {
        rename(path.join(checkout, 'projects/shop/flags/polled.yaml'), 'From polling');
      }, 'rename polled');
      const api = httpClient(polling.controlUrl, adminKey);
      const started = Date.now();
      let name = '';
      while (name !== 'From polling' && Date.now() - started < 5_000) {
        name = (await api.get(`/api/v1/flags/${flag.id}`)).body.name;
        if (name !== 'From polling') await sleep(50);
      }
      expect(name).toBe('From polling');
      expect(git(polling.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(pushed);
    } finally {
      await polling.stop();
    }
  });

  it('makes a local repository lost while stopped again from the remote, rather than refuse to start', async () => {
    await service.stop();
    const gitdir = service.repos.gitdirOf('acme');
    await rm(gitdir, { recursive: true, force: true });
    const restarted = await startService(config, silentLogger);
    try {
      expect(git(gitdir, 'rev-parse', 'main')).toBe(git(host.gitdir, 'rev-parse', 'main'));
      const api = httpClient(restarted.controlUrl, adminKey);
      expect((await api.get('/api/v1/projects')).body.projects).toEqual(
        expect.arrayContaining([expect.objectContaining({ slug: 'shop' })]),
      );
    } finally {
      await restarted.stop();
    }
  });
});

describe('a push to /git/<org>.git while the git host hangs (takes connections, answers nothing)', () => {
  it('is refused once the push timeout has passed, saying so, with nothing changed and no git left running', async () => {
    const host = await startGitServer();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-remote-hung-push-'));
    const work = mkdtempSync(path.join(os.tmpdir(), 'flagops-remote-hung-work-'));
    const adminKey = generateKey('admin');
    const service = await startService(
      // Pushes given up after 5 s: the flag's own push, before the host hangs, takes over 2 s on a busy machine.
      remoteConfig(dataDir, host.url, adminKey, { gitRemote: { url: host.url, pollSeconds: 0, pushTimeoutSeconds: 5 } }),
      silentLogger,
    );
    try {
      const admin = httpClient(service.controlUrl, adminKey);
      const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
      expect((await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'pushed-while-hung' })).status).toBe(201);
      const checkout = path.join(work, 'checkout');
      const url = `${service.controlUrl.replace('://', `://engineer:${adminKey}@`)}/git/acme.git`;
      expect((await gitAsync(work, 'clone', '--quiet', url, checkout)).ok).toBe(true);
      const file = path.join(checkout, 'projects/shop/flags/pushed-while-hung.yaml');
      writeFileSync(file, `${readFileSync(file, 'utf8')}description: pushed while the host hangs\n`);
      git(checkout, 'commit', '--quiet', '-am', 'rename while the host hangs');
      const before = git(service.repos.gitdirOf('acme'), 'rev-parse', 'main');
      host.hang();
      try {
        const refused = await Promise.race([
          gitAsync(checkout, 'push', 'origin', 'HEAD:main'),
          sleep(20_000).then(() => ({ ok: true, stderr: 'no answer within 20 s' })),
        ]);
        expect(refused.stderr).toContain('did not answer within');
        expect(refused.ok).toBe(false);
        expect(git(service.repos.gitdirOf('acme'), 'rev-parse', 'main')).toBe(before);
      } finally {
        host.answer();
      }
      // The push on to the host was stopped with its HTTP helper: no git of it is left talking to the host.
      await until(
        async () => gitProcessesTalkingTo(host.url),
        (n) => n === 0,
        5_000,
      );
      expect(git(host.gitdir, 'rev-parse', 'main')).toBe(before);
    } finally {
      await service.stop();
      await host.stop();
      await rm(dataDir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    }
  });
});

/** How many processes on the machine have `url` on their command line (git's remote-http helper names it). */
function gitProcessesTalkingTo(url: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(url)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}
