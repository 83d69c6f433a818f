import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { flagops, ROOT } from '../cli/cli-harness.js';
import { until } from '../helpers/deadlines.js';
import { git, pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { runBlock, shellBlocks } from '../readme/doc-blocks.js';
import { remoteConfig, startGitServer } from './git-server.js';

describe('flagops import in remote mode (FLAGOPS_GIT_REMOTE)', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let service: Service;
  let admin: HttpClient;
  let project: Json;
  const adminKey = generateKey('admin');
  let config: Config;

  beforeAll(async () => {
    host = await startGitServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-import-remote-'));
    config = remoteConfig(dataDir, host.url, adminKey);
    service = await startService(config, silentLogger);
    admin = httpClient(service.controlUrl, adminKey);
    project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
  });
  afterAll(async () => {
    await service.stop();
    await host.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const localMain = () => git(service.repos.gitdirOf('acme'), 'rev-parse', 'main');
  const hostMain = () => git(host.gitdir, 'rev-parse', 'main');
  const importSample = (env: Record<string, string>) =>
    flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir, '--replace', '--yes'], ROOT, env);
  /** A merged pull request: an engineer's commit lands on the host's main, which the service has not fetched. */
  const mergeOnHost = (name: string) =>
    pushEdit(host.gitdir, (checkout) => writeFileSync(path.join(checkout, `${name}.md`), `${name}\n`), `merge ${name}`);
  const flagKeys = async () => ((await admin.get(`/api/v1/projects/${project.id}/flags`)).body.flags as Json[]).map((f) => f.key as string);

  it('with the git host down, is refused in one line and changes nothing; the service writes once the host is back', async () => {
    const before = localMain();
    await host.down();
    let result: Awaited<ReturnType<typeof flagops>>;
    try {
      result = await importSample({ FLAGOPS_GIT_REMOTE: host.url });
    } finally {
      await host.up();
    }
    expect(result.code, result.stdout).toBe(1);
    expect(result.stderr).toMatch(/^flagops import: the git remote http:\/\/127\.0\.0\.1:\d+\/flags\.git [^\n]*; nothing was imported\n$/);
    expect(localMain()).toBe(before);
    expect(hostMain()).toBe(before);
    expect(await flagKeys()).not.toContain('holiday-banner');

    // Someone merges on the host meanwhile: main has nothing the host lacks, so the service's next change is made
    // on the merge, not refused as diverged.
    const merged = mergeOnHost('while-down');
    const created = await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'after-the-outage' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(hostMain()).toBe(localMain());
    expect(git(host.gitdir, 'merge-base', '--is-ancestor', merged, 'main')).toBe('');
    const health = (await admin.get('/healthz')).body;
    expect(health.gitRemote).toMatchObject({ reachable: true, diverged: false });
  });

  it('without FLAGOPS_GIT_REMOTE is refused, naming the remote the organisation follows, and changes nothing', async () => {
    const before = localMain();
    const result = await importSample({});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `flagops import: organisation acme follows the git remote ${host.url} (remote mode): set FLAGOPS_GIT_REMOTE as the service has it, so the import reaches the remote before main moves; nothing was imported\n`,
    );
    expect(localMain()).toBe(before);
  });

  it('with the host up, reaches the host before main moves, on top of what was merged there meanwhile, and is served', async () => {
    const merged = mergeOnHost('before-import');
    const result = await importSample({ FLAGOPS_GIT_REMOTE: host.url });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const commit = /commit ([0-9a-f]{40})/.exec(result.stdout)![1];
    expect(hostMain()).toBe(commit);
    expect(localMain()).toBe(commit);
    expect(git(host.gitdir, 'rev-parse', `${commit}^`)).toBe(merged);
    await until(flagKeys, (keys) => keys.includes('holiday-banner'));
    const flag = (await admin.get(`/api/v1/projects/${project.id}/flags`)).body.flags.find((f: Json) => f.key === 'holiday-banner');
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 5 })).status).toBe(200);
    expect(hostMain()).toBe(localMain());
  });

  it('after main and the host diverged, the documented reconciliation makes writes work again, and no version goes back', async () => {
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'reconciled-rollout' })).body;
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { enabled: true, rolloutPct: 31 })).status).toBe(200);
    const read = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.dev;
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' })).body.key;
    const snapshot = (etag?: string) =>
      fetch(`${service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${sdk}`, ...(etag ? { 'if-none-match': etag } : {}) } });
    const etagBefore = (await snapshot()).headers.get('etag')!;
    // Someone force-pushes the host: its last commit (the 31 %) rewritten as 90 %.
    const head = hostMain();
    expect(localMain()).toBe(head);
    const configFile = 'projects/shop/environments/dev/reconciled-rollout.yaml';
    const work = await mkdtemp(path.join(os.tmpdir(), 'flagops-force-push-'));
    const checkout = path.join(work, 'c');
    git(work, 'clone', '--quiet', host.gitdir, checkout);
    git(checkout, 'reset', '--quiet', '--hard', 'HEAD^');
    const text = await readFile(path.join(checkout, configFile), 'utf8');
    writeFileSync(
      path.join(checkout, configFile),
      text.replace(/^enabled: .*$/m, 'enabled: true').replace(/^rolloutPct: .*$/m, 'rolloutPct: 90'),
    );
    git(checkout, 'commit', '--quiet', '-am', 'rewritten on the host: 90 %');
    git(checkout, 'push', '--quiet', 'origin', 'HEAD:refs/heads/rewrite');
    const rewritten = git(checkout, 'rev-parse', 'HEAD');
    await rm(work, { recursive: true, force: true });
    git(host.gitdir, 'update-ref', 'refs/heads/main', rewritten);
    git(host.gitdir, 'update-ref', '-d', 'refs/heads/rewrite');
    const refused = await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'while-diverged' });
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toContain('have diverged');

    // docs/deployment.md, "Reconciling a diverged main", word for word: with the service stopped, keep main on a
    // branch of the host, set main to the host's main, and start the service.
    await service.stop();
    const guide = await readFile(path.join(ROOT, 'docs/deployment.md'), 'utf8');
    const procedure = shellBlocks(guide, 'Remote mode: an outside git repository as the source of truth').find((b) =>
      b.includes('update-ref'),
    )!;
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      GIT_CONFIG_NOSYSTEM: '1',
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_GIT_REMOTE: host.url,
      // The operator's own identity, as their shell has it: the reconciling commit is theirs.
      GIT_AUTHOR_NAME: 'Operator',
      GIT_AUTHOR_EMAIL: 'operator@example.com',
      GIT_COMMITTER_NAME: 'Operator',
      GIT_COMMITTER_EMAIL: 'operator@example.com',
    };
    const ran = await runBlock(`set -euo pipefail\n${procedure}`, dataDir, env);
    expect(ran.code, ran.out).toBe(0);
    service = await startService(config, silentLogger);
    admin = httpClient(service.controlUrl, adminKey);

    expect(git(host.gitdir, 'rev-parse', 'diverged-main')).toBe(head);
    expect((await admin.get('/healthz')).body).toMatchObject({ status: 'ok', gitRemote: { reachable: true, diverged: false } });
    // The host's files are served, at versions past every one given out before.
    const reconciled = (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments.dev;
    expect(reconciled.rolloutPct).toBe(90);
    expect(reconciled.version).toBeGreaterThan(read.version);
    const stale = await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { rolloutPct: 5, expectedVersion: read.version });
    expect([stale.status, stale.body.error?.code]).toEqual([409, 'version_conflict']);
    const after = await snapshot(etagBefore);
    expect(after.status).toBe(200);
    const version = (etag: string) => Number(/"v(\d+)"/.exec(etag)![1]);
    expect(version(after.headers.get('etag')!)).toBeGreaterThan(version(etagBefore));
    expect((await after.json()).flags['reconciled-rollout'].rolloutPct).toBe(90);

    const created = await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'reconciled' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(git(host.gitdir, 'rev-parse', 'main^^')).toBe(head);
    expect(git(host.gitdir, 'rev-parse', 'main^^2')).toBe(rewritten);
    expect(hostMain()).toBe(localMain());
  });

  it('once the service starts without a remote, imports without FLAGOPS_GIT_REMOTE again', async () => {
    await service.stop();
    const { gitRemote: _, ...local } = config;
    service = await startService(local, silentLogger);
    admin = httpClient(service.controlUrl, adminKey);
    const result = await flagops(
      ['import', 'flags', '--org', 'acme', '--data-dir', dataDir, '--replace', '--yes', '--actor', 'bob'],
      ROOT,
      {},
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
