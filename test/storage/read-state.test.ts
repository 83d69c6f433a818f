import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import {
  configYaml,
  git,
  gitWith,
  meta,
  newFlagFiles,
  projectYaml,
  pushFromOutside,
  SIGNING_KEY,
  seedShop,
  tempDir,
  track,
} from './helpers.js';

async function twoProjects() {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true, signingKey: SIGNING_KEY }));
  await seedShop(repo);
  await repo.update(() => ({
    changes: [{ path: layout.projectFile('blog'), content: projectYaml('blog') }, ...newFlagFiles('blog', 'comments')],
    meta: meta('project_create', { project: 'blog' }),
    result: undefined,
  }));
  return repo;
}

describe('readState after main moved by one file', () => {
  it('reuses the state of everything the commit did not touch', async () => {
    const repo = await twoProjects();
    const before = (await repo.readState()).state;
    const { state: after } = await repo.update(() => ({
      changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: configYaml({ enabled: true, version: 2 }) }],
      meta: meta('config_update'),
      result: undefined,
    }));
    expect(after.projects.get('blog')).toBe(before.projects.get('blog'));
    const [a0, a1] = [before, after].map((s) => s.projects.get('shop')!.flags.get('a')!);
    expect(a1.environments.prod).not.toBe(a0.environments.prod);
    expect(a1.environments.dev).toBe(a0.environments.dev);
    expect(a1.meta).toBe(a0.meta);
    expect(after.projects.get('shop')!.flags.get('b')!.environments.prod).toBe(
      before.projects.get('shop')!.flags.get('b')!.environments.prod,
    );
  });

  it('reads the same state from a fresh instance as the writer holds', async () => {
    const repo = await twoProjects();
    const held = await repo.readState();
    const fresh = await track(await FlagRepository.open({ gitdir: repo.gitdir })).readState();
    expect(fresh).toEqual(held);
  });

  it('hands out frozen values, so no reader can change another reader’s state', async () => {
    const repo = await twoProjects();
    const config = (await repo.readState()).state.projects.get('shop')!.flags.get('a')!.environments.prod;
    expect(() => {
      (config as { enabled: boolean }).enabled = true;
    }).toThrow(TypeError);
    expect(() => (config.rules as unknown[]).push({})).toThrow(TypeError);
  });
});

describe('readState of what engineers push', () => {
  it('reports an invalid file with its position and keeps serving every other flag', async () => {
    const repo = await twoProjects();
    const broken = layout.configFile('shop', 'dev', 'a');
    pushFromOutside(repo.gitdir, (checkout) =>
      writeFileSync(join(checkout, broken), 'enabled: true\nrolloutPct: 150\nvalueOn: true\nvalueOff: false\n'),
    );
    const { state, issues } = await repo.readState();
    expect(issues).toContainEqual(expect.objectContaining({ file: broken, path: '/rolloutPct', line: 2 }));
    expect([...state.projects.get('shop')!.flags.keys()]).toEqual(['b']);
    expect([...state.projects.get('blog')!.flags.keys()]).toEqual(['comments']);
  });

  it('ignores files outside projects/ (a README, CI config)', async () => {
    const repo = await twoProjects();
    const before = await repo.readState();
    pushFromOutside(repo.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), '# flags\n'));
    const after = await repo.readState();
    expect(after.issues).toEqual([]);
    expect(after.state.projects).toEqual(before.state.projects);
  });

  it('assembles two projects claiming one flag id together, so the clash is reported', async () => {
    const repo = await twoProjects();
    pushFromOutside(repo.gitdir, (checkout) =>
      writeFileSync(join(checkout, layout.flagFile('blog', 'comments')), 'id: flg_a\nkey: comments\n'),
    );
    const { issues } = await repo.readState();
    expect(issues).toContainEqual(expect.objectContaining({ path: '/id', message: expect.stringContaining('flg_a') }));
  });
});

describe('a repository packed by git gc', () => {
  it('reads the same state, history and revisions as before packing, deltas included', async () => {
    const repo = await twoProjects();
    // Twenty small edits of one file: git gc stores most versions as deltas against another.
    for (let version = 2; version <= 21; version++) {
      await repo.update(() => ({
        changes: [{ path: layout.configFile('shop', 'prod', 'a'), content: `${configYaml({ version })}# ${'padding '.repeat(40)}\n` }],
        meta: meta('config_update'),
        result: undefined,
      }));
    }
    const head = (await repo.head())!;
    const older = git(repo.gitdir, 'rev-parse', 'main~7');
    const expected = { head: await repo.readState(head), older: await repo.readState(older), changes: await repo.changedPaths(older) };

    for (const config of [[], ['-c', 'repack.useDeltaBaseOffset=false']]) {
      // OFS_DELTA by default; REF_DELTA (what thin packs from a push use) when offsets are off.
      gitWith(repo.gitdir, {}, ...config, 'repack', '-a', '-d', '-f', '--quiet');
      git(repo.gitdir, 'prune-packed');
      expect(git(repo.gitdir, 'count-objects', '-v')).toMatch(/^count: 0$/m);
      expect(git(repo.gitdir, 'verify-pack', '-v', ...packIndexes(repo.gitdir))).toMatch(/chain length = \d+: \d+ objects?/);
      const packed = track(await FlagRepository.open({ gitdir: repo.gitdir, signingKey: SIGNING_KEY }));
      expect(await packed.readState(head)).toEqual(expected.head);
      expect(await packed.readState(older)).toEqual(expected.older);
      expect(await packed.changedPaths(older)).toEqual(expected.changes);
      expect(await packed.resolveRevision(older.slice(0, 8))).toBe(older);
      expect((await packed.readCommit(head)).flagops).toMatchObject({ action: 'config_update' });
    }
  });
});

function packIndexes(gitdir: string): string[] {
  const dir = join(gitdir, 'objects', 'pack');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.idx'))
    .map((name) => join(dir, name));
}
