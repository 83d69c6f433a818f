import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { agent, configYaml, git, gitWith, meta, newFlagFiles, projectYaml, seedShop, tempDir, track } from './helpers.js';

async function openNew() {
  const gitdir = join(tempDir(), 'acme.git');
  return { gitdir, repo: track(await FlagRepository.open({ gitdir, create: true })) };
}

describe('a new organisation repository', () => {
  it('is created bare on first use, HEAD naming refs/heads/main, with no commit yet', async () => {
    const { gitdir, repo } = await openNew();
    expect(git(gitdir, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(readFileSync(join(gitdir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(await repo.head()).toBeNull();
    const { state, issues, commit } = await repo.readState();
    expect(commit).toBeNull();
    expect(state.projects.size).toBe(0);
    expect(issues).toEqual([]);
  });

  it('refuses pushes that rewrite or delete main, since the log is the append-only audit trail', async () => {
    const { gitdir } = await openNew();
    expect(git(gitdir, 'config', 'receive.denyNonFastForwards')).toBe('true');
    expect(git(gitdir, 'config', 'receive.denyDeletes')).toBe('true');
  });

  it('is not created when create is not set', async () => {
    await expect(FlagRepository.open({ gitdir: join(tempDir(), 'missing.git') })).rejects.toThrow(/not a git repository/);
  });
});

describe('update then readState (the committed tree is the truth)', () => {
  it('reads back as typed state what was written', async () => {
    const { repo } = await openNew();
    const { commit, committed, parent, state } = await repo.update(() => ({
      changes: [{ path: layout.projectFile('shop'), content: projectYaml('shop') }, ...newFlagFiles('shop', 'checkout')],
      meta: meta('flag_create', { project: 'shop', flag: 'checkout' }),
      result: 'created',
    }));
    expect(committed).toBe(true);
    expect(parent).toBeNull();
    expect(commit).toBe(await repo.head());
    expect(state.commit).toBe(commit);

    const reread = await track(await FlagRepository.open({ gitdir: repo.gitdir })).readState();
    expect(reread.issues).toEqual([]);
    const shop = reread.state.projects.get('shop')!;
    expect(shop.project).toEqual({ id: 'prj_shop', name: 'Project shop', slug: 'shop' });
    expect(shop.flags.get('checkout')!.meta).toMatchObject({ id: 'flg_checkout', key: 'checkout', kind: 'boolean', archivedAt: null });
    expect(shop.flags.get('checkout')!.environments.prod).toEqual({
      enabled: false,
      rolloutPct: 0,
      valueOn: true,
      valueOff: false,
      version: 1,
      rules: [],
    });
  });

  it('hands the write function the state of main and returns its result', async () => {
    const { repo } = await openNew();
    const seeded = await seedShop(repo);
    const seen: Array<string | null> = [];
    const { result, state } = await repo.update((current, head) => {
      seen.push(head);
      const version = current.projects.get('shop')!.flags.get('a')!.environments.prod.version;
      return {
        changes: [
          { path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, rolloutPct: 50, version: version + 1 }) },
        ],
        meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
        result: version + 1,
      };
    });
    expect(seen).toEqual([seeded]);
    expect(result).toBe(2);
    expect(state.projects.get('shop')!.flags.get('a')!.environments.prod).toMatchObject({ enabled: true, rolloutPct: 50, version: 2 });
  });

  it('deletes a file whose content is null', async () => {
    const { repo } = await openNew();
    await seedShop(repo);
    const { state } = await repo.update(() => ({
      changes: newFlagFiles('shop', 'b').map((c) => ({ path: c.path, content: null })),
      meta: meta('flag_delete', { project: 'shop', flag: 'b' }),
      result: undefined,
    }));
    expect([...state.projects.get('shop')!.flags.keys()]).toEqual(['a']);
    expect(git(repo.gitdir, 'ls-tree', '-r', '--name-only', 'main')).not.toMatch(/\/b\.yaml/);
  });

  it('makes no commit when nothing differs from main, and says so', async () => {
    const { repo } = await openNew();
    const seeded = await seedShop(repo);
    const outcome = await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml() }],
      meta: meta('config_update'),
      result: 'same',
    }));
    expect(outcome).toMatchObject({ commit: seeded, parent: seeded, committed: false, result: 'same' });
    expect(git(repo.gitdir, 'rev-list', '--count', 'main')).toBe('1');
  });

  it('writes the commit id a fixed clock and fixed content determine, byte for byte what git writes', async () => {
    const gitdir = join(tempDir(), 'fixed.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, clock: () => new Date('2024-05-01T12:00:00Z') }));
    const { commit } = await repo.update(() => ({
      changes: [{ path: layout.projectFile('shop'), content: projectYaml('shop') }],
      meta: { action: 'project_create', summary: 'create project shop', actor: agent, project: 'shop' },
      result: undefined,
    }));
    expect(commit).toBe('7c12581481031020ee5b915f8a7751767d4614f2');
    expect(git(gitdir, 'log', '-1', '--format=%an <%ae> %at|%cn <%ce>', 'main')).toBe(
      'deploy-bot <svc_agt_3kq9x2ab@keys.flagops> 1714564800|flagops <flagops@localhost>',
    );
    // git itself, given the same tree, parent, people, dates and message, writes the same commit.
    const byGit = gitWith(
      gitdir,
      {
        input: (await repo.readCommit(commit!)).message,
        env: {
          GIT_AUTHOR_NAME: 'deploy-bot',
          GIT_AUTHOR_EMAIL: 'svc_agt_3kq9x2ab@keys.flagops',
          GIT_AUTHOR_DATE: '1714564800 +0000',
          GIT_COMMITTER_NAME: 'flagops',
          GIT_COMMITTER_EMAIL: 'flagops@localhost',
          GIT_COMMITTER_DATE: '1714564800 +0000',
        },
      },
      'commit-tree',
      `${commit}^{tree}`,
      '-F',
      '-',
    );
    expect(byGit).toBe(commit);
    expect(git(gitdir, 'fsck', '--full', '--strict')).toBe('');
  });
});

describe('a checkout opened with { dir }', () => {
  it('reads the commits of the clone and refuses to write', async () => {
    const { repo } = await openNew();
    const seeded = await seedShop(repo);
    const checkout = join(tempDir(), 'clone');
    git(tempDir(), 'clone', '--quiet', repo.gitdir, checkout);
    const clone = track(await FlagRepository.open({ dir: checkout }));
    expect(clone.readOnly).toBe(true);
    expect(await clone.resolveRevision('HEAD')).toBe(seeded);
    expect((await clone.readState(seeded)).state.projects.get('shop')!.flags.size).toBe(2);
    await expect(clone.update(() => ({ changes: [], meta: meta('change'), result: undefined }))).rejects.toThrow(/read-only/);
  });
});

describe('onCommit', () => {
  it('is told the action of each commit that moved main, and not of a change that committed nothing', async () => {
    const actions: string[] = [];
    const gitdir = join(tempDir(), 'acme.git');
    const repo = track(await FlagRepository.open({ gitdir, create: true, onCommit: (action) => actions.push(action) }));
    await seedShop(repo);
    const unchanged = await repo.update(() => ({ changes: [], meta: meta('config_update'), result: undefined }));
    expect(unchanged.committed).toBe(false);
    await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
      meta: meta('config_update', { project: 'shop', flag: 'a', environment: 'prod' }),
      result: undefined,
    }));
    expect(actions).toEqual(['project_create', 'config_update']);
  });
});
