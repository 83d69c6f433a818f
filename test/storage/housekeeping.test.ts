import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { ROLL_UP_EVERY } from '../../src/foundations/storage/git/housekeeping.js';
import { FlagRepository, RepositoryRegistry } from '../../src/foundations/storage/index.js';
import { stateIn } from '../helpers/control-state.js';
import { configYaml, git, meta, seedShop, tempDir, waitFor } from './helpers.js';

/** A config update of flag `key` (a or b of the shop) as the control plane makes it. */
const setRollout =
  (rolloutPct: number, version: number, key = 'a', environment: EnvironmentName = 'prod') =>
  () => ({
    changes: [{ path: layout.configFile('shop', environment, key), content: configYaml({ rolloutPct, version }) }],
    meta: meta('config_update', { project: 'shop', flag: key, environment }),
    result: undefined,
  });

/** A registry packing every `gcEveryCommits` commits, with the shop seeded in organisation acme. */
async function withShop(gcEveryCommits: number, run: (repo: FlagRepository, registry: RepositoryRegistry) => Promise<void>): Promise<void> {
  const dataDir = tempDir();
  const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false, gcEveryCommits });
  try {
    const repo = await registry.get('acme');
    await seedShop(repo);
    await run(repo, registry);
  } finally {
    await registry.closeAll();
  }
}

async function readFresh(gitdir: string) {
  const reopened = await FlagRepository.open({ gitdir, parseCache: false });
  try {
    return await reopened.readState();
  } finally {
    await reopened.close();
  }
}

const looseObjects = (gitdir: string) => Number(/^count: (\d+)$/m.exec(git(gitdir, 'count-objects', '-v'))![1]);
const packs = (gitdir: string) =>
  existsSync(join(gitdir, 'objects/pack')) ? readdirSync(join(gitdir, 'objects/pack')).filter((n) => n.endsWith('.pack')).length : 0;

/** Open files of this process that are packs deleted from disk (Linux: /proc/self/fd links end " (deleted)"). */
const deletedPacksOpen = () =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.includes('/objects/pack/') && target.endsWith(' (deleted)');
    } catch {
      return false; // closed meanwhile
    }
  }).length;

describe('repository housekeeping (FLAGOPS_GIT_GC_COMMITS)', () => {
  it('packs a repository every N commits, and reads and writes go on from the pack', () =>
    withShop(3, async (repo, registry) => {
      await repo.update(setRollout(10, 2));
      await registry.housekeeping.idle();
      // Two commits: not yet. Each left its objects as a pack of its own.
      const written = packs(repo.gitdir);
      expect(written).toBe(2);
      await repo.update(setRollout(20, 3));
      await registry.housekeeping.idle();
      expect(packs(repo.gitdir)).toBeLessThan(written + 1);
      expect(looseObjects(repo.gitdir)).toBe(0);
      expect(git(repo.gitdir, 'fsck', '--full', '--strict')).toBe('');

      await repo.update(setRollout(30, 4));
      const { state, issues } = await readFresh(repo.gitdir);
      expect(issues).toEqual([]);
      expect(state.projects.get('shop')!.flags.get('a')!.environments.prod).toMatchObject({ rolloutPct: 30, version: 4 });
      expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('4');
    }));

  it('loses nothing when writers keep committing while it packs', () =>
    withShop(10, async (repo, registry) => {
      const keys = ['a', 'b'];
      await Promise.all(
        keys.map(async (key) => {
          for (let version = 2; version <= 31; version++) await repo.update(setRollout(version, version, key, 'dev'));
        }),
      );
      await registry.housekeeping.idle();
      expect(packs(repo.gitdir)).toBeGreaterThanOrEqual(1);
      expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('61');
      expect(git(repo.gitdir, 'fsck', '--full', '--strict')).toBe('');
      const { state } = await repo.readState();
      for (const key of keys)
        expect(state.projects.get('shop')!.flags.get(key)!.environments.dev).toMatchObject({ rolloutPct: 31, version: 31 });
    }));

  it('lets go of packs a repack removed, so their disk space is freed', () =>
    withShop(2, async (repo, registry) => {
      await repo.update(setRollout(10, 2));
      await registry.housekeeping.idle();
      await repo.readState(); // reads through the pack the first run made
      // Combine everything into one new pack, removing the old one, as gc --auto does once packs pile up.
      git(repo.gitdir, 'repack', '-a', '-d', '-q');
      repo.packsChanged();
      // Closed on the thread pool: the last close of a deleted file waits on the disk.
      await waitFor(() => (deletedPacksOpen() === 0 ? true : undefined));
      await repo.update(setRollout(20, 3));
      expect((await readFresh(repo.gitdir)).state.projects.get('shop')!.flags.get('a')!.environments.prod.rolloutPct).toBe(20);
    }));

  it('rolls up the packs commits leave every 50 commits, long before N', () =>
    withShop(1000, async (repo, registry) => {
      // The seed's commit and 48 more: one short of a roll-up, each commit's objects still in a pack of its own.
      for (let v = 2; v < ROLL_UP_EVERY; v++) await repo.update(setRollout(v, v));
      await registry.housekeeping.idle();
      expect(packs(repo.gitdir)).toBe(ROLL_UP_EVERY - 1);
      await repo.update(setRollout(1, ROLL_UP_EVERY + 1));
      await registry.housekeeping.idle();
      // --geometric=2 leaves pack sizes at least doubling: a handful, whatever the number of commits.
      expect(packs(repo.gitdir)).toBeLessThanOrEqual(3);
      expect(git(repo.gitdir, 'fsck', '--full', '--strict')).toBe('');
      const { state } = await readFresh(repo.gitdir);
      expect(state.projects.get('shop')!.flags.get('a')!.environments.prod).toMatchObject({ rolloutPct: 1, version: ROLL_UP_EVERY + 1 });
      // The store reads on from the new pack, having let go of those the roll-up removed.
      await waitFor(() => (deletedPacksOpen() === 0 ? true : undefined));
      await repo.update(setRollout(2, ROLL_UP_EVERY + 2));
      expect((await repo.readState()).state.projects.get('shop')!.flags.get('a')!.environments.prod.rolloutPct).toBe(2);
    }));

  it('never packs with 0: each commit keeps its own pack', () =>
    withShop(0, async (repo, registry) => {
      const before = packs(repo.gitdir);
      for (let v = 2; v < 6; v++) await repo.update(setRollout(v, v));
      await registry.housekeeping.idle();
      expect(packs(repo.gitdir)).toBe(before + 4);
    }));

  describe('runs git out of the way of serving', () => {
    /** How each git was started: nice value, I/O class, parent process and arguments, as a `git` first on PATH saw them. */
    interface Started {
      nice: number;
      ioClass: string;
      parent: number;
      args: string;
    }
    /**
     * Puts a `git` first on PATH that notes how it was started and runs the real one (after `before`, shell
     * lines run with the log's path in $log); `started` reads the notes.
     */
    function recordingGit(before = ''): { started: () => Started[]; log: () => string; restore: () => void } {
      const dir = tempDir();
      const log = join(dir, 'started.log');
      const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      const ioClass = existsSync('/usr/bin/ionice') || existsSync('/bin/ionice') ? '$(ionice -p $$ | cut -d: -f1)' : 'none';
      writeFileSync(
        join(dir, 'git'),
        `#!/bin/sh\nlog='${log}'\necho "$(ps -o ni= -p $$ | tr -d ' ') ${ioClass} $PPID $*" >> "$log"\n${before}\nexec '${real}' "$@"\n`,
      );
      chmodSync(join(dir, 'git'), 0o755);
      const path = process.env.PATH;
      process.env.PATH = `${dir}:${path}`;
      return {
        log: () => (existsSync(log) ? readFileSync(log, 'utf8') : ''),
        started: () =>
          existsSync(log)
            ? readFileSync(log, 'utf8')
                .trim()
                .split('\n')
                .map((line) => {
                  const [nice, ioClass, parent, ...args] = line.split(' ');
                  return { nice: Number(nice), ioClass, parent: Number(parent), args: args.join(' ') };
                })
            : [],
        restore: () => {
          process.env.PATH = path;
        },
      };
    }
    const ionice = existsSync('/usr/bin/ionice') || existsSync('/bin/ionice');

    it('packs at the lowest CPU and I/O priority, and the repository stays whole', async () => {
      const gits = recordingGit();
      try {
        await withShop(2, async (repo, registry) => {
          await repo.update(setRollout(10, 2));
          await registry.housekeeping.idle();
          const repack = gits.started().find((g) => g.args.includes('repack'));
          expect(repack).toMatchObject({ nice: 19, ...(ionice ? { ioClass: 'idle' } : {}) });
          expect(git(repo.gitdir, 'fsck', '--full', '--strict')).toBe('');
          expect(packs(repo.gitdir)).toBe(1);
          expect((await readFresh(repo.gitdir)).state.projects.get('shop')!.flags.get('a')!.environments.prod.rolloutPct).toBe(10);
        });
      } finally {
        gits.restore();
      }
    });

    it('a stop while it packs waits for git to have exited, so nothing writes to the repository after it', async () => {
      // A repack that takes a while to end when told to stop, as one cleaning up its temporary pack does.
      const gits = recordingGit(
        `case "$*" in *repack*) trap 'sleep 0.3; echo exited >> "$log"; kill $pid; exit 143' TERM; sleep 30 & pid=$!; wait $pid;; esac`,
      );
      const dataDir = tempDir();
      const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false, gcEveryCommits: 2 });
      try {
        const repo = await registry.get('acme');
        await seedShop(repo);
        await repo.update(setRollout(10, 2));
        await waitFor(() => gits.started().find((g) => g.args.includes('repack')));
        await registry.closeAll();
        expect(gits.log()).toContain('exited');
      } finally {
        await registry.closeAll();
        gits.restore();
      }
    });
  });
});

describe('a housekeeping run that fails', () => {
  it('is a warning with git’s message and counted by organisation and step; the repository stays whole', async () => {
    const dataDir = tempDir();
    const lines: string[] = [];
    const failures: Array<[string, string]> = [];
    const registry = new RepositoryRegistry({
      dataDir,
      trust: (await stateIn(dataDir)).commitTrust,
      watch: false,
      gcEveryCommits: 1,
      logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }),
      onHousekeepingFailure: (org, step) => failures.push([org, step]),
    });
    try {
      const repo = await registry.get('acme');
      await seedShop(repo);
      await registry.housekeeping.idle();
      expect(failures).toEqual([]);
      // A config git refuses to work with: every git command in the repository fails, the service's reads do not.
      const config = join(repo.gitdir, 'config');
      writeFileSync(config, readFileSync(config, 'utf8').replace('repositoryformatversion = 0', 'repositoryformatversion = 99'));
      expect((await repo.update(setRollout(33, 1))).committed).toBe(true);
      await registry.housekeeping.idle();
      expect(failures).toEqual([['acme', 'repack']]);
      const warning = lines.map((line) => JSON.parse(line)).find((record) => record.msg.startsWith('packing the repository failed'));
      expect(warning).toMatchObject({
        level: 'warn',
        step: 'git repack',
        stderr: expect.stringContaining('Expected git repo version <= 1, found 99'),
      });
      expect((await repo.readState()).issues).toEqual([]);
    } finally {
      await registry.closeAll();
    }
  });
});

describe('the git that housekeeping starts, when the service is killed', () => {
  it.skipIf(process.platform !== 'linux')('ends with the service instead of going on beside the next one (Linux, setpriv)', async () => {
    const dir = tempDir();
    const gitdir = join(dir, 'r.git');
    git(dir, 'init', '-q', '--bare', gitdir);
    const pidFile = join(dir, 'git.pid');
    // A git that runs until it is stopped, writing its pid (its shell's parent) as it starts. The built module
    // (npm run build), as the service runs it.
    const module = pathToFileURL(join(process.cwd(), 'dist', 'foundations', 'storage', 'git', 'git-cli.js')).href;
    const service = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { gitRun, execGitAtLowestPriority } = await import(${JSON.stringify(module)});
         await gitRun(${JSON.stringify(gitdir)}, ['-c', 'alias.long=!echo $PPID $$ > ${pidFile}; exec sleep 60', 'long'], { launch: execGitAtLowestPriority, timeoutMs: 120000 });`,
      ],
      { stdio: 'ignore' },
    );
    const pids = await waitFor(() => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined));
    const [gitPid, sleepPid] = pids.split(' ').map(Number);
    try {
      expect(alive(gitPid)).toBe(true);
      service.kill('SIGKILL');
      await waitFor(() => (alive(gitPid) ? undefined : true));
      expect(alive(gitPid)).toBe(false);
    } finally {
      service.kill('SIGKILL');
      if (alive(sleepPid)) process.kill(sleepPid, 'SIGKILL'); // what git ran is not git's to end
    }
  });
});

/** Whether `pid` runs: a zombie (exited, not yet reaped by whoever adopted it) does not. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
