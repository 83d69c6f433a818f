import { chmodSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteSync } from '../../src/features/remote/remote-sync.js';
import { type KnownHost, type LeftToGit, pushOverSmartHttp } from '../../src/features/remote/smart-http-push.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import type { GitResult } from '../../src/foundations/storage/git/git-cli.js';
import { FlagRepository, packOfAdded } from '../../src/foundations/storage/index.js';
import { until } from '../helpers/deadlines.js';
import { configYaml, git, meta, newFlagFiles, pushFromOutside, seedShop, tempDir, track } from '../storage/helpers.js';
import { startGitServer } from './git-server.js';

const MAIN = 'refs/heads/main';
const hosts: Array<Awaited<ReturnType<typeof startGitServer>>> = [];
const others: http.Server[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
  for (const server of others.splice(0)) server.close();
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

/** The host's answer to a push the process made (a test fails if it was left to git). */
function answered(result: GitResult | LeftToGit): GitResult {
  if ('why' in result) throw new Error(`left to git: ${result.why}`);
  return result;
}

/**
 * A web server that is not a smart git host, with the User-Agent of each request: `/dumb.git` answers as a
 * static file server (200, text/plain), `/moved.git` redirects, `/failing.git` answers 502.
 */
async function startOtherHost() {
  const agents: string[] = [];
  const server = http.createServer((req, res) => {
    agents.push(req.headers['user-agent'] ?? '');
    if (req.url?.startsWith('/moved.git')) res.writeHead(301, { location: '/dumb.git/info/refs' }).end();
    else if (req.url?.startsWith('/failing.git')) res.writeHead(502).end('bad gateway');
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  others.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, agents };
}

/** `commit` pushed onto main at `url` from this process, with the objects it adds to its parent. */
const pushOf = (repo: FlagRepository, commit: string, url: string) =>
  pushOverSmartHttp({ url, ref: MAIN, commit, objects: () => repo.packAddedBy(commit, 1 << 20), timeoutMs: 5_000 });

describe('a push of main from this process, over smart HTTP', () => {
  it('puts the commit on the host, complete, without a git process', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const pushed = answered(await pushOf(repo, commit, host.url));
    expect(pushed).toMatchObject({ code: 0 });
    expect(pushed.stdout).toContain(`${parent.slice(0, 7)}..${commit.slice(0, 7)}`);
    expect(hostMain(host)).toBe(commit);
    // git on the host finds every object of the commit, and the tree is this repository's.
    expect(git(host.gitdir, 'fsck', '--full', '--strict', '--no-progress')).toBe('');
    expect(git(host.gitdir, 'ls-tree', '-r', MAIN)).toBe(git(repo.gitdir, 'ls-tree', '-r', commit));
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)']);
  });

  it("sends the URL's credentials to the host as Basic authorization", async () => {
    const { repo, host, commit } = await aheadOfHost();
    const url = host.url.replace('http://', 'http://x-access-token:t%40ken@');
    const pushed = answered(await pushOf(repo, commit, url));
    expect(pushed.code).toBe(0);
    const basic = `Basic ${Buffer.from('x-access-token:t@ken').toString('base64')}`;
    expect(host.pushAuthorizations).toEqual([basic, basic]);
    // Messages name the host without the credentials.
    expect(pushed.stdout).toContain(`To ${host.url}`);
    expect(pushed.stdout).not.toContain('t%40ken');
  });

  it('sends nothing and leaves the push to git when the host moved on, or the objects cannot be told', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const noObjects = await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects: async () => null, timeoutMs: 5_000 });
    expect(noObjects).toEqual({ why: "the commit's objects are not at hand", always: false });
    const outside = pushFromOutside(host.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), 'flags\n'));
    expect(git(host.gitdir, 'rev-parse', `${outside}~1`)).toBe(parent);
    const moved = await pushOf(repo, commit, host.url);
    expect(moved).toEqual({ why: "the remote's refs/heads/main is not the commit's parent", always: false });
    expect(hostMain(host)).toBe(outside);
    expect(host.pushAgents.filter((request) => request.startsWith('POST'))).toEqual([]);
  });

  it('reports what the host said when it refuses the update, and the host keeps its main', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const hook = join(host.gitdir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "main is protected: open a pull request" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const pushed = answered(await pushOf(repo, commit, host.url));
    expect(pushed.code).toBe(1);
    expect(pushed.stdout).toContain('[remote rejected] (pre-receive hook declined)');
    expect(pushed.stderr).toContain('remote: main is protected: open a pull request');
    expect(hostMain(host)).toBe(parent);
  });

  it('leaves the push to git when the host finds the objects sent short of what the commit needs', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const added = (await repo.objectsAddedBy(commit, 1 << 20))!;
    // The last object (a blob of the new flag) left out.
    const short = added.framed.subarray(0, added.framed.lastIndexOf(Buffer.from('blob ')));
    const objects = async () => ({ parent, pack: packOfAdded({ parent, framed: short }) });
    expect(await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000 })).toEqual({
      why: 'the host refused the objects sent',
      always: false,
    });
    expect(hostMain(host)).toBe(parent);
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)']);
  });

  it('sends the update alone to a host whose capabilities it knows; a host that moved refuses it and keeps its main', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const known: KnownHost = { capabilities: null };
    const push = (oid: string) =>
      pushOverSmartHttp({
        url: host.url,
        ref: MAIN,
        commit: oid,
        objects: () => repo.packAddedBy(oid, 1 << 20),
        timeoutMs: 5_000,
        host: known,
      });
    expect(answered(await push(commit)).code).toBe(0);
    expect(known.capabilities?.has('report-status')).toBe(true);
    const next = await commitOn(repo, 3);
    const pushed = answered(await push(next));
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toContain(`${commit.slice(0, 7)}..${next.slice(0, 7)}`);
    expect(hostMain(host)).toBe(next);
    expect(git(host.gitdir, 'fsck', '--full', '--strict', '--no-progress')).toBe('');
    expect(host.pushAgents).toEqual(['GET git/2 (flagops)', 'POST git/2 (flagops)', 'POST git/2 (flagops)']);
    // Another writer moves the host's main: the update from the old head is refused as a lost race is, nothing moves.
    const outside = pushFromOutside(host.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), 'flags\n'));
    const stale = await commitOn(repo, 4);
    const refused = answered(await push(stale));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('[remote rejected] (failed to update ref)');
    expect(hostMain(host)).toBe(outside);
    expect(git(host.gitdir, 'merge-base', '--is-ancestor', parent, outside)).toBe('');
  });

  it('asks a known host for its refs again when it answers an update otherwise than before', async () => {
    const { repo, commit } = await aheadOfHost();
    const other = await startOtherHost();
    const known: KnownHost = { capabilities: new Set(['report-status', 'side-band-64k']) };
    const pushed = await pushOverSmartHttp({
      url: `${other.url}/failing.git`,
      ref: MAIN,
      commit,
      objects: () => repo.packAddedBy(commit, 1 << 20),
      timeoutMs: 5_000,
      host: known,
    });
    expect(pushed).toEqual({ why: 'the host answered HTTP 502', always: false });
    expect(known.capabilities).toBeNull();
    // The update, then the ref advertisement it fell back to.
    expect(other.agents).toEqual(['git/2 (flagops)', 'git/2 (flagops)']);
  });

  it('fails at once, without git, when the host is down, and past its deadline when the host hangs', async () => {
    const { repo, parent, host, commit } = await aheadOfHost();
    const objects = () => repo.packAddedBy(commit, 1 << 20);
    await host.down();
    const refused = answered(await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000 }));
    expect(refused).toMatchObject({ code: 128 });
    expect(refused.timedOut).toBeUndefined();
    expect(refused.stderr).toMatch(/unable to access '.*flags\.git': .*ECONNREFUSED/);
    await host.up();
    host.hang();
    const hung = await pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 300 });
    expect(hung).toMatchObject({ code: 128, timedOut: true });
    host.answer();
    const cut = new AbortController();
    host.hang();
    const cutOff = pushOverSmartHttp({ url: host.url, ref: MAIN, commit, objects, timeoutMs: 5_000, signal: cut.signal });
    cut.abort();
    expect(answered(await cutOff).timedOut).toBeUndefined();
    host.answer();
    expect(hostMain(host)).toBe(parent);
  });

  it('leaves other transports, and hosts that do not answer as smart HTTP, to git for good; a host that fails to it once only', async () => {
    const { repo, host, commit } = await aheadOfHost();
    const objects = () => repo.packAddedBy(commit, 1 << 20);
    const push = (url: string) => pushOverSmartHttp({ url, ref: MAIN, commit, objects, timeoutMs: 5_000 });
    for (const url of [host.gitdir, `file://${host.gitdir}`, 'git@example.invalid:acme/flags.git'])
      expect(await push(url), url).toEqual({ why: 'the remote is not an http(s) URL', always: true });
    const other = await startOtherHost();
    expect(await push(`${other.url}/dumb.git`)).toEqual({ why: 'the host does not answer as smart HTTP', always: true });
    expect(await push(`${other.url}/moved.git`)).toEqual({ why: 'the host answered HTTP 301', always: true });
    expect(await push(`${other.url}/failing.git`)).toEqual({ why: 'the host answered HTTP 502', always: false });
    expect(await push(host.url.replace('flags.git', 'nothing.git'))).toMatchObject({ always: false });
  });

  it('once the remote is one git pushes to, remote mode asks it nothing from the process again', async () => {
    const { repo, gitdir, parent, commit } = await aheadOfHost();
    const other = await startOtherHost();
    const sync = new RemoteSync(gitdir, `${other.url}/dumb.git`, silentLogger, undefined, undefined, {}, 5_000, (oid) =>
      repo.packAddedBy(oid, 1 << 20),
    );
    // git cannot push to a dumb host either: the change is refused, twice, and the process asked once.
    for (let i = 0; i < 2; i++) await expect(sync.publish(commit, parent, 'config_update')).rejects.toMatchObject({ code: 'unavailable' });
    expect(other.agents.filter((agent) => agent === 'git/2 (flagops)')).toHaveLength(1);
    expect(other.agents.filter((agent) => /^git\/\d+\.\d+/.test(agent)).length).toBeGreaterThanOrEqual(2);
    sync.close();
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
    // Another writer moved the host's main: the process's next push, sent without asking for the refs, is refused
    // as a lost race is, and the host's main is fetched, so the store runs the change again on it.
    const outside = pushFromOutside(host.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), 'flags\n'));
    const stale = await commitOn(repo, 4);
    const agents = host.pushAgents.length;
    expect(await sync.publish(stale, next, 'config_update')).toBe(false);
    expect(host.pushAgents.slice(agents)).toEqual(['POST git/2 (flagops)']);
    expect(hostMain(host)).toBe(outside);
    expect(await sync.fetchedHead()).toBe(outside);
    sync.close();
    byGit.close();
  });
});

/** A proxy in front of `host` that, once asked, lets the next push's update reach the host and drops its answer. */
async function answerDroppingProxy(host: { url: string }) {
  const target = new URL(host.url);
  let dropNext = false;
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        if (dropNext && req.method === 'POST' && req.url?.endsWith('/git-receive-pack')) {
          dropNext = false;
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  others.push(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname}`,
    dropNextAnswer() {
      dropNext = true;
    },
  };
}

describe('a pull of the remote while main moves', () => {
  it('takes main moved meanwhile to the remote head for what it is, not for a divergence', async () => {
    const { gitdir, parent, host, commit } = await aheadOfHost();
    // The host has `commit` (pushed from elsewhere); main here is still at its parent.
    git(gitdir, 'push', '--quiet', host.gitdir, `${commit}:${MAIN}`);
    git(gitdir, 'update-ref', MAIN, parent, commit);
    const sync = new RemoteSync(gitdir, host.url, silentLogger);
    // Main moves to the remote's head (a commit handed over by another control plane) right as the pull moves it.
    const moving = sync as unknown as { follow(local: string | null, remote: string): Promise<boolean> };
    const follow = moving.follow.bind(sync);
    moving.follow = async (local, remote) => {
      git(gitdir, 'update-ref', MAIN, commit, parent);
      return follow(local, remote);
    };
    expect(await sync.pull()).toBe('unchanged');
    expect(sync.health()).toMatchObject({ diverged: false });
    sync.close();
  });
});

describe('a push of main through remote mode, acknowledged', () => {
  it('is acknowledged when the host took it and only its answer was lost, and refused when the host did not take it', async () => {
    const { repo, gitdir, parent, host, commit } = await aheadOfHost();
    const proxy = await answerDroppingProxy(host);
    const sync = new RemoteSync(gitdir, proxy.url, silentLogger, undefined, undefined, {}, 5_000, (oid) => repo.packAddedBy(oid, 1 << 20));
    expect(await sync.publish(commit, parent, 'config_update')).toBe(true);
    const next = await commitOn(repo, 3);
    proxy.dropNextAnswer();
    expect(await sync.publish(next, commit, 'config_update')).toBe(true);
    expect(hostMain(host)).toBe(next);
    // A host that refuses the update says so in its answer: nothing changed, and the change is refused.
    const hook = join(host.gitdir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\nexit 1\n');
    chmodSync(hook, 0o755);
    const refused = await commitOn(repo, 4);
    await expect(sync.publish(refused, next, 'config_update')).rejects.toMatchObject({ code: 'unavailable' });
    expect(hostMain(host)).toBe(next);
    sync.close();
  });

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
