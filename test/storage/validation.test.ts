import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { type FileChange, FlagRepository } from '../../src/foundations/storage/index.js';
import { configYaml, git, meta, newFlagFiles, pushFromOutside, seedShop, tempDir, track } from './helpers.js';

async function openSeeded() {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true }));
  const seeded = await seedShop(repo);
  return { repo, seeded };
}

async function rejection(repo: FlagRepository, changes: FileChange[]): Promise<InvalidInputError> {
  const error = await repo.update(() => ({ changes, meta: meta('config_update'), result: undefined })).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

describe('what update writes is validated first (an invalid file through the API is refused with 400)', () => {
  it('refuses a schema violation, naming the file and the JSON path, and commits nothing', async () => {
    const { repo, seeded } = await openSeeded();
    const path = layout.configFile('shop', 'prod', 'a');
    const error = await rejection(repo, [{ path, content: configYaml({ rolloutPct: 150 }) }]);
    expect(error.code).toBe('invalid_input');
    expect(error.field).toBe(path);
    expect(error.message).toContain(`${path}:2:13: /rolloutPct:`);
    expect(git(repo.gitdir, 'rev-parse', 'main')).toBe(seeded);
  });

  it('refuses YAML that does not parse, with its line', async () => {
    const { repo, seeded } = await openSeeded();
    const path = layout.flagFile('shop', 'a');
    const error = await rejection(repo, [{ path, content: 'id: flg_a\nkey: [a\n' }]);
    expect(error.message).toMatch(new RegExp(`${path}:\\d+:\\d+: YAML syntax error`));
    expect(git(repo.gitdir, 'rev-parse', 'main')).toBe(seeded);
  });

  it('refuses a change that breaks another file (a config without its flag), and commits nothing', async () => {
    const { repo, seeded } = await openSeeded();
    const orphan = layout.configFile('shop', 'dev', 'ghost');
    const error = await rejection(repo, [{ path: orphan, content: configYaml() }]);
    expect(error.message).toContain(`${orphan}: has no flag file`);
    expect(git(repo.gitdir, 'rev-parse', 'main')).toBe(seeded);
  });

  it('refuses paths outside the repository or inside .git', async () => {
    const { repo } = await openSeeded();
    for (const path of ['../escape.yaml', '/etc/passwd', 'projects//x.yaml', 'projects/./x.yaml', '.git/config', 'projects/shop/.GIT/x']) {
      const error = await rejection(repo, [{ path, content: 'x: 1\n' }]);
      expect(error.field).toBe(path);
    }
  });

  it('refuses a file where a directory is, and the same path twice', async () => {
    const { repo } = await openSeeded();
    await rejection(repo, [{ path: layout.flagsDir('shop'), content: 'x: 1\n' }]);
    await rejection(repo, [
      { path: layout.configFile('shop', 'dev', 'a'), content: configYaml() },
      { path: layout.configFile('shop', 'dev', 'a'), content: null },
    ]);
  });

  it('does not block other changes on an invalid file someone pushed; readState reports it and serves the rest', async () => {
    const { repo } = await openSeeded();
    const broken = layout.configFile('shop', 'prod', 'b');
    pushFromOutside(repo.gitdir, (checkout) => writeFileSync(join(checkout, broken), 'enabled: maybe\n'));
    const { state, issues } = await repo.readState();
    expect(issues.map((i) => i.file)).toContain(broken);
    expect([...state.projects.get('shop')!.flags.keys()]).toEqual(['a']);

    const { committed, state: after } = await repo.update(() => ({
      changes: newFlagFiles('shop', 'c'),
      meta: meta('flag_create', { flag: 'c' }),
      result: undefined,
    }));
    expect(committed).toBe(true);
    expect([...after.projects.get('shop')!.flags.keys()]).toEqual(['a', 'c']);
  });

  it('does not refuse a valid write for problems other files had before it, even where their words could change', async () => {
    const { repo } = await openSeeded();
    // A project folder without project.yaml: a problem of that project's, before any write.
    pushFromOutside(repo.gitdir, (checkout) => rmSync(join(checkout, layout.projectFile('shop'))));
    const before = (await repo.readState()).issues;
    expect(before.map((i) => i.file)).toEqual([layout.projectFile('shop')]);
    const { committed } = await repo.update(() => ({
      changes: newFlagFiles('shop', 'c'),
      meta: meta('flag_create', { flag: 'c' }),
      result: undefined,
    }));
    expect(committed).toBe(true);
    expect((await repo.readState()).issues).toEqual(before);
  });
});
