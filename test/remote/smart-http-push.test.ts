import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteSync } from '../../src/features/remote/remote-sync.js';
import { pushOverSmartHttp } from '../../src/features/remote/smart-http-push.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository, packOfAdded } from '../../src/foundations/storage/index.js';
import { until } from '../helpers/deadlines.js';
import { configYaml, git, meta, newFlagFiles, pushFromOutside, seedShop, tempDir, track } from '../storage/helpers.js';
import { startGitServer } from './git-server.js';

const MAIN = 'refs/heads/main';
const hosts: Array<Awaited<ReturnType<typeof startGitServer>>> = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
});

/** A repository holding project `shop`, a git host whose main is its main, and a commit on top not pushed yet. */
async function aheadOfHost() {
  const gitdir = join(tempDir(), 'r.git');
  const repo = track(await FlagRepository.open({ gitdir, create: true }));
  const parent = await seedShop(repo);
  const host = await startGitServer();
  hosts.push(host);
  // Straight into the host's repository: the host's own process serves HTTP, which a synchronous git would block.
  git(gitdir, 'push', '--quiet', host.gitdir, `${parent}:${MAIN}`);
  const commit = await commitOn(repo, 2);
  return { gitdir, repo, parent, host, commit };
}

async function commitOn(repo: FlagRepository, version: number): Promise<string> {
  const { commit } = await repo.update(() => ({
    changes: [
      { path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 40, version }) },
      ...newFlagFiles('shop', `f${version}`),
    ],
    meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
    result: undefined,
  }));
  return commit!;
}

const hostMain = (host: { gitdir: string }) => git(host.gitdir, 'rev-parse', MAIN);

/** `commit` pushed onto main at `url` from this process, with the objects it adds to its parent. */
const pushOf = (repo: FlagRepository, commit: string, url: string) =>
  pushOverSmartHttp({ url, ref: MAIN, commit, objects: () => repo.packAddedBy(commit, 1 << 20), timeoutMs: 5_000 });

describe('a push of main from this process, over smart HTTP', () => {
  it('puts the commit on the host, complete, without a git process', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const pushed = await pushOf(repo, commit, host.url);
    expect(pushed).toMatchObject({ code: 0 });
    expect(pushed?.stdout).toContain(`${parent.slice(0, 7)}..${commit.slice(0, 7)}`);
    expect(hostMain(host)).toBe(commit);
    // git on the host finds every object of the commit, and the tree is this repository's.
    expect(git(host.gitdir, 'fsck', '--full', '--strict', '--no-progress')).toBe('');
    expect(git(host.gitdir, 'ls-tree', '-r', MAIN)).toBe(git(repo.gitdir, 'ls-tree', '-r', commit));
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)']);
  });

  it("sends the URL's credentials to the host as Basic authorization", async () => {
    const { repo, host, commit } = await aheadOfHost();
    const url = host.url.replace('http://', 'http://x-access-token:t%40ken@');
    const pushed = await pushOf(repo, commit, url);
    expect(pushed?.code).toBe(0);
    const basic = `Basic ${Buffer.from('x-access-token:t@ken').toString('base64')}`;
    expect(host.pushAuthorizations).toEqual([basic, basic]);
    // Messages name the host without the credentials.
    expect(pushed?.stdout).toContain(`To ${host.url}`);
    expect(pushed?.stdout).not.toContain('t%40ken');
  });

  it('sends nothing and leaves the push to git when the host moved on, or the objects cannot be told', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const noObjects = await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects: async () => null, timeoutMs: 5_000 });
    expect(noObjects).toBeNull();
    const outside = pushFromOutside(host.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), 'flags\n'));
    expect(git(host.gitdir, 'rev-parse', `${outside}~1`)).toBe(parent);
    const moved = await pushOf(repo, commit, host.url);
    expect(moved).toBeNull();
    expect(hostMain(host)).toBe(outside);
    expect(host.pushAgents.filter((request) => request.startsWith('POST'))).toEqual([]);
  });

  it('reports what the host said when it refuses the update, and the host keeps its main', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const hook = join(host.gitdir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "main is protected: open a pull request" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const pushed = await pushOf(repo, commit, host.url);
    expect(pushed?.code).toBe(1);
    expect(pushed?.stdout).toContain('[remote rejected] (pre-receive hook declined)');
    expect(pushed?.stderr).toContain('remote: main is protected: open a pull request');
    expect(hostMain(host)).toBe(parent);
  });

  it('leaves the push to git when the host finds the objects sent short of what the commit needs', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const added = (await repo.objectsAddedBy(commit, 1 << 20))!;
    // The last object (a blob of the new flag) left out.
    const short = added.framed.subarray(0, added.framed.lastIndexOf(Buffer.from('blob ')));
    const objects = async () => ({ parent, pack: packOfAdded({ parent, framed: short }) });
    expect(await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000 })).toBeNull();
    expect(hostMain(host)).toBe(parent);
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)']);
  });

  it('fails at once, without git, when the host is down, and past its deadline when the host hangs', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const objects = () => repo.packAddedBy(commit, 1 << 20);
    await host.down();
    const refused = await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000 });
    expect(refused).toMatchObject({ code: 128 });
    expect(refused?.timedOut).toBeUndefined();
    expect(refused?.stderr).toMatch(/unable to access '.*flags\.git': .*ECONNREFUSED/);
    await host.up();
    host.hang();
    const hung = await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 300 });
    expect(hung).toMatchObject({ code: 128, timedOut: true });
    host.answer();
    const cut = new AbortController();
    host.hang();
    const cutOff = pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000, signal: cut.signal });
    cut.abort();
    expect((await cutOff)?.timedOut).toBeUndefined();
    host.answer();
    expect(hostMain(host)).toBe(parent);
  });

  it('leaves other transports and hosts that do not answer as smart HTTP to git', async () => {
    const { repo, host, commit } = await aheadOfHost();
    const objects = () => repo.packAddedBy(commit, 1 << 20);
    for (const url of [
      host.gitdir,
      `file://${host.gitdir}`,
      'git@example.invalid:acme/flags.git',
      host.url.replace('flags.git', 'nothing.git'),
    ]) {
      expect(await pushOverSmartHttp({ url, ref: MAIN, commit, objects, timeoutMs: 5_000 })).toBeNull();
    }
  });

  it('is how remote mode pushes main: a change published is on the host, sent from this process', async () => {
    const { repo, gitdir, parent, host, commit } = await aheadOfHost();
    const sync = new RemoteSync(gitdir, host.url, silentLogger, undefined, undefined, {}, 5_000, (oid) => repo.packAddedBy(oid, 1 << 20));
    expect(await sync.publish(commit, parent, 'config_update')).toBe(true);
    expect(hostMain(host)).toBe(commit);
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)']);
    // Without the objects (more than a push from here sends), git pushes it.
    const next = await commitOn(repo, 3);
    const byGit = new RemoteSync(gitdir, host.url, silentLogger, undefined, undefined, {}, 5_000);
    expect(await byGit.publish(next, commit, 'config_update')).toBe(true);
    expect(hostMain(host)).toBe(next);
    expect(host.pushAgents.slice(2).every((request) => /^(GET|POST) git\/\d+\.\d+/.test(request))).toBe(true);
    sync.close();
    byGit.close();
  });
});

describe('a push of main through remote mode, acknowledged', () => {
  it('is not acknowledged before the other control planes are told of it', async () => {
    const { repo, gitdir, parent, host, commit } = await aheadOfHost();
    let told: () => void = () => {};
    const telling = new Promise<void>((resolve) => {
      told = resolve;
    });
    const inSync: string[] = [];
    const sync = new RemoteSync(
      gitdir,
      host.url,
      silentLogger,
      undefined,
      undefined,
      {
        inSync: (oid, pushedHere) => {
          inSync.push(`${oid} ${pushedHere}`);
          return telling;
        },
      },
      5_000,
      (oid) => repo.packAddedBy(oid, 1 << 20),
    );
    let published = false;
    const publishing = sync.publish(commit, parent, 'config_update').then((result) => {
      published = true;
      return result;
    });
    await until(
      async () => inSync.length,
      (n) => n === 1,
    );
    expect(hostMain(host)).toBe(commit);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(published).toBe(false);
    told();
    expect(await publishing).toBe(true);
    expect(inSync).toEqual([`${commit} true`]);
    sync.close();
  });
});
