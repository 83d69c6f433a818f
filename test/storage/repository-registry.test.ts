import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { type MainMoved, RepositoryRegistry } from '../../src/foundations/storage/index.js';
import { stateIn } from '../helpers/control-state.js';
import { git, pushFromOutside, seedShop, tempDir, waitFor } from './helpers.js';

describe('RepositoryRegistry', () => {
  it('creates <dataDir>/repos/<org>.git on first use, one instance per organisation even under concurrent calls', async () => {
    const dataDir = tempDir();
    const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
    try {
      const [first, second, other] = await Promise.all([registry.get('acme'), registry.get('acme'), registry.get('globex')]);
      expect(first).toBe(second);
      expect(other).not.toBe(first);
      expect(first.gitdir).toBe(join(dataDir, 'repos', 'acme.git'));
      expect(git(first.gitdir, 'rev-parse', '--is-bare-repository')).toBe('true');
      expect(readdirSync(join(dataDir, 'repos')).sort()).toEqual(['acme.git', 'globex.git']);
      expect(await registry.get('acme')).toBe(first);
    } finally {
      await registry.closeAll();
    }
  });

  it('refuses organisation names that could leave the data directory', async () => {
    const dataDir = tempDir();
    const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
    for (const org of ['../evil', 'a/b', '.hidden', 'Acme', '', 'x'.repeat(64), 'acme\0', '-dash']) {
      await expect(registry.get(org), JSON.stringify(org)).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(existsSync(join(dataDir, 'repos'))).toBe(false);
    await registry.closeAll();
  });

  it('hands out repositories that announce pushes from outside, and closes them all on closeAll', async () => {
    const dataDir = tempDir();
    const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, repository: { watchDebounceMs: 20 } });
    try {
      const repo = await registry.get('acme');
      const seeded = await seedShop(repo);
      const moves: MainMoved[] = [];
      repo.onMainMoved((e) => moves.push(e));
      const pushed = pushFromOutside(repo.gitdir, (checkout) => writeFileSync(join(checkout, 'README.md'), 'flags\n'));
      await waitFor(() => (moves.length > 0 ? true : undefined));
      expect(moves).toEqual([{ from: seeded, to: pushed, origin: 'external' }]);
    } finally {
      await registry.closeAll();
    }
  });

  it('opens nothing after closeAll: a task still running at a stop gets 503 unavailable and writes nothing to the data directory', async () => {
    const dataDir = tempDir();
    const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
    await registry.get('acme');
    await registry.closeAll();
    const before = readdirSync(dataDir, { recursive: true }).sort();
    for (const org of ['acme', 'globex']) {
      await expect(registry.get(org), org).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('stopping') });
    }
    expect(readdirSync(dataDir, { recursive: true }).sort()).toEqual(before);
  });
});

describe('packing, which the service alone does (housekeeping), never git on its own beside it', () => {
  const packs = (gitdir: string) => readdirSync(join(gitdir, 'objects', 'pack')).filter((name) => name.endsWith('.pack')).length;
  /** Three packs of one blob each: past the gc.autoPackLimit the check below gives git gc --auto. */
  function threePacks(gitdir: string): void {
    for (let i = 0; i < 3; i++) {
      const oid = execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], { input: `blob ${i}\n`, encoding: 'utf8' });
      execFileSync('git', ['--git-dir', gitdir, 'pack-objects', '-q', join(gitdir, 'objects', 'pack', 'pack')], { input: oid });
    }
    git(gitdir, 'prune-packed');
  }
  /** A key of the repository's config, or null when it is not set. */
  function config(gitdir: string, key: string): string | null {
    try {
      return execFileSync('git', ['--git-dir', gitdir, 'config', '--get', key], { encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  }

  it('is so in a new repository and, from the start of the service, in one made before: git gc --auto leaves its packs be', async () => {
    const dataDir = tempDir();
    const registry = new RepositoryRegistry({ dataDir, trust: (await stateIn(dataDir)).commitTrust, watch: false });
    try {
      const made = registry.gitdirOf('globex');
      git(dataDir, 'init', '--bare', '-q', made);
      await registry.leavePackingToTheService('globex');
      const fresh = (await registry.get('acme')).gitdir;
      for (const gitdir of [fresh, made]) {
        // A push's receive-pack runs no git gc --auto after taking the pack, nor does a fetch run maintenance.
        expect([config(gitdir, 'receive.autogc'), config(gitdir, 'maintenance.auto')]).toEqual(['false', 'false']);
        // Nor does a git gc --auto (what they run) pack anything, past any limit.
        threePacks(gitdir);
        git(gitdir, '-c', 'gc.autoPackLimit=2', '-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet');
        expect(packs(gitdir), gitdir).toBe(3);
      }
    } finally {
      await registry.closeAll();
    }
  });
});
