import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { parseRepositoryFile } from '../../src/foundations/repository/parse-file.js';
import { ObjectStore } from '../../src/foundations/storage/git/object-store.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { ParseCache } from '../../src/foundations/storage/served/parse-cache.js';
import { StateLoader } from '../../src/foundations/storage/served/state-loader.js';
import { configYaml, meta, seedShop, tempDir, track } from './helpers.js';

/** A loader as a restarted service has one, counting the files it parses. */
function restart(gitdir: string, options: { cache?: boolean } = {}) {
  const parsed: string[] = [];
  const objects = new ObjectStore(gitdir);
  const cache = options.cache === false ? undefined : ParseCache.open(gitdir, silentLogger);
  const loader = new StateLoader(
    objects,
    (path, text) => {
      parsed.push(path);
      return parseRepositoryFile(path, text);
    },
    { cache, saveAfterParses: 1 },
  );
  return { loader, parsed, close: () => loader.close().finally(() => objects.close()) };
}

async function seeded() {
  const repo = track(await FlagRepository.open({ gitdir: join(tempDir(), 'org.git'), create: true }));
  const head = await seedShop(repo);
  return { repo, head };
}

async function firstStart(gitdir: string, head: string) {
  const first = restart(gitdir);
  const loaded = await first.loader.load(head);
  await first.close();
  return { loaded, parsed: first.parsed };
}

const cacheFile = (gitdir: string) => join(gitdir, 'flagops-cache', 'parsed-projects.jsonl');

describe('the parse cache kept under the gitdir', () => {
  it('gives a restart the same state without parsing a file, its values frozen as parsed ones are', async () => {
    const { repo, head } = await seeded();
    const first = await firstStart(repo.gitdir, head);
    expect(first.parsed.length).toBeGreaterThan(0);
    const second = restart(repo.gitdir);
    const loaded = await second.loader.load(head);
    await second.close();
    expect(second.parsed).toEqual([]);
    expect(loaded).toEqual(first.loaded);
    expect(Object.isFrozen(loaded.state.projects.get('shop')!.flags.get('a')!.environments.prod)).toBe(true);
  });

  it('has only the files that changed since it was saved parsed again', async () => {
    const { repo, head } = await seeded();
    await firstStart(repo.gitdir, head);
    const path = layout.configFile('shop', 'prod', 'a');
    const { commit } = await repo.update(() => ({
      changes: [{ path, content: configYaml({ enabled: true, version: 2 }) }],
      meta: meta('config_update'),
      result: undefined,
    }));
    const cached = restart(repo.gitdir);
    const loaded = await cached.loader.load(commit);
    await cached.close();
    expect(cached.parsed).toEqual([path]);
    const uncached = restart(repo.gitdir, { cache: false });
    expect(loaded).toEqual(await uncached.loader.load(commit));
    await uncached.close();
  });

  it('is ignored when damaged or written by another version of the parser', async () => {
    const { repo, head } = await seeded();
    const first = await firstStart(repo.gitdir, head);
    const text = readFileSync(cacheFile(repo.gitdir), 'utf8');
    const newline = text.indexOf('\n');
    const damaged = `${text.slice(0, newline + 1)}${text.slice(newline + 1).replace('"rolloutPct":0', '"rolloutPct":1')}`;
    const otherParser = text.replace(/"fingerprint":"[0-9a-f]+"/, '"fingerprint":"0000"');
    for (const content of [damaged, otherParser, 'not a cache\n']) {
      expect(content).not.toBe(text);
      writeFileSync(cacheFile(repo.gitdir), content);
      const again = restart(repo.gitdir);
      const loaded = await again.loader.load(head);
      await again.close();
      // Directories are read concurrently, so the order of parsing varies.
      expect([...again.parsed].sort()).toEqual([...first.parsed].sort());
      expect(loaded).toEqual(first.loaded);
    }
  });

  it('leaves out what JSON would not give back as parsed (-0), which is parsed again', async () => {
    const { repo } = await seeded();
    const path = layout.configFile('shop', 'dev', 'n');
    const { commit } = await repo.update(() => ({
      changes: [
        { path: layout.flagFile('shop', 'n'), content: 'key: n\nkind: number\n' },
        ...['dev', 'staging', 'prod'].map((env) => ({
          path: layout.configFile('shop', env as 'dev', 'n'),
          content: 'enabled: true\nrolloutPct: 0\nvalueOn: -0\nvalueOff: 1\n',
        })),
      ],
      meta: meta('flag_create'),
      result: undefined,
    }));
    await firstStart(repo.gitdir, commit!);
    const again = restart(repo.gitdir);
    const loaded = await again.loader.load(commit);
    await again.close();
    expect(again.parsed).toContain(path);
    expect(again.parsed.length).toBe(3);
    expect(Object.is(loaded.state.projects.get('shop')!.flags.get('n')!.environments.dev.valueOn, -0)).toBe(true);
  });
});
