import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AuditIndex, AuditRegistry, type AuditSource } from '../../src/features/audit/index.js';
import { createLogger, type Logger } from '../../src/foundations/log/logger.js';
import { layout } from '../../src/foundations/repository/layout.js';
import type { FlagRepository } from '../../src/foundations/storage/index.js';
import { afterTest, apiCommit, Checkout, configYaml, git, killsYaml, openIndex, openRepository, seedShop, tempDir } from './fixtures.js';

/** The real repository, counting the commits the index walks and the diffs it reads. */
function counted(repo: FlagRepository) {
  const counts = { walked: 0, diffs: 0 };
  const source: AuditSource = {
    head: () => repo.head(),
    onMainMoved: (listener) => repo.onMainMoved(listener),
    readBlob: (oid) => repo.readBlob(oid),
    changedPaths: (oid) => {
      counts.diffs++;
      return repo.changedPaths(oid);
    },
    firstParentLog: async (options) => {
      const commits = await repo.firstParentLog(options);
      counts.walked += commits.length;
      return commits;
    },
  };
  return { source, counts };
}

/** The cache file's header line and the commits on the line after it. */
function readCache(file: string): { header: { format: number; crc32: number }; commits: Array<[string, Array<Record<string, unknown>>]> } {
  const text = readFileSync(file, 'utf8');
  const newline = text.indexOf('\n');
  return { header: JSON.parse(text.slice(0, newline)), commits: JSON.parse(text.slice(newline + 1)) };
}

/** A cache file of `header`'s format holding `commits`, with the checksum that matches them. */
function cacheText(header: { format: number }, commits: unknown): string {
  const body = JSON.stringify(commits);
  return `${JSON.stringify({ ...header, crc32: crc32(body) })}\n${body}`;
}

async function openCached(repo: FlagRepository, cacheFile: string, logger?: Logger) {
  const { source, counts } = counted(repo);
  const index = await AuditIndex.open({ repo: source, cacheFile, ...(logger ? { logger } : {}) });
  // Closed (its cache writes finished) before the temp dirs go, whatever the test did.
  afterTest(() => index.close());
  return { index, counts };
}

/** shop, then an engineer's kill (described from its diff), then an API commit: 5 commits. */
async function history(repo: FlagRepository): Promise<void> {
  await seedShop(repo);
  const checkout = Checkout.of(repo).write(layout.killsFile('shop', 'prod'), killsYaml({ a: { by: 'erin', reason: 'broken' } }));
  checkout.commit('Kill a in prod');
  await checkout.push(repo);
  await apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'b'), content: configYaml({ enabled: true, version: 2 }) }], {
    action: 'config_update',
    project: 'shop',
    flag: 'b',
    environment: 'dev',
  });
}

describe('the index kept on disk between restarts', () => {
  it('is written after the first build, and a restart reads only the commits made since', async () => {
    const repo = await openRepository();
    await history(repo);
    const cacheFile = join(tempDir(), 'audit', 'acme.json');
    const first = await openCached(repo, cacheFile);
    await first.index.saved();
    expect(first.counts).toEqual({ walked: 5, diffs: 1 });
    expect(existsSync(cacheFile)).toBe(true);
    await first.index.close();

    const landed = await apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ version: 2 }) }], {
      action: 'config_update',
      project: 'shop',
      flag: 'a',
    });
    const second = await openCached(repo, cacheFile);
    expect(second.counts).toEqual({ walked: 1, diffs: 0 });
    const fresh = await openIndex(repo);
    const page = await second.index.query({ limit: 500 });
    expect(page.entries[0].id).toBe(landed);
    expect(page).toEqual(await fresh.query({ limit: 500 }));
    await second.index.close();
  });

  it('writes what it indexed since on close', async () => {
    const repo = await openRepository();
    await history(repo);
    const cacheFile = join(tempDir(), 'acme.json');
    const { index } = await openCached(repo, cacheFile);
    await index.saved();
    const landed = await apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ version: 2 }) }], {
      action: 'config_update',
      project: 'shop',
      flag: 'a',
    });
    expect(readFileSync(cacheFile, 'utf8')).not.toContain(landed);
    index.close();
    await index.saved();
    expect(readFileSync(cacheFile, 'utf8')).toContain(landed);
  });

  it('close() resolves once everything indexed is in the cache on disk, so the directory can be removed', async () => {
    const repo = await openRepository();
    await history(repo);
    const dir = tempDir();
    const cacheFile = join(dir, 'acme.json');
    const { index } = await openCached(repo, cacheFile);
    const landed = await apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ version: 2 }) }], {
      action: 'config_update',
      project: 'shop',
      flag: 'a',
    });
    await index.query({ limit: 1 });
    await index.close();
    expect(readFileSync(cacheFile, 'utf8')).toContain(landed);
    expect(readdirSync(dir)).toEqual(['acme.json']);
  });

  it('is ignored when unreadable or not what it claims, and the log is read instead', async () => {
    const repo = await openRepository();
    await history(repo);
    const expected = await (await openIndex(repo)).query({ limit: 500 });
    const cacheFile = join(tempDir(), 'acme.json');
    const { index } = await openCached(repo, cacheFile);
    await index.saved();
    await index.close();
    const good = readCache(cacheFile);
    const wrongId = structuredClone(good.commits);
    wrongId[1][1][0].id = 'f'.repeat(40);
    const wrongAction = structuredClone(good.commits);
    wrongAction[1][1][0].action = 'explode';
    for (const bad of [
      '{not json',
      cacheText({ format: 999 }, good.commits),
      // Shapes the checksum does not catch, as a file written by a faulty version would have them.
      cacheText(good.header, wrongId),
      cacheText(good.header, wrongAction),
      `${JSON.stringify(good.header)}\n`,
      'null',
    ]) {
      writeFileSync(cacheFile, bad);
      const { index: reopened, counts } = await openCached(repo, cacheFile);
      expect(counts.walked, bad.slice(0, 40)).toBe(5);
      expect(await reopened.query({ limit: 500 })).toEqual(expected);
      await reopened.close(); // close() rewrites the cache; the next bad file must not race with it
    }
  });

  it('is not believed when a bit of it flipped, even in free text that still reads as valid: a warning, and the log is read', async () => {
    const repo = await openRepository();
    await history(repo);
    const expected = await (await openIndex(repo)).query({ limit: 500 });
    const cacheFile = join(tempDir(), 'acme.json');
    const { index } = await openCached(repo, cacheFile);
    await index.saved();
    await index.close();
    const good = readFileSync(cacheFile, 'utf8');
    // An actor's name and a flag key, each one bit off: still JSON, still entries of their commits.
    for (const [from, to] of [
      ['"name":"deploy-bot"', '"name":"deploy-bou"'],
      ['"flagKey":"b"', '"flagKey":"c"'],
    ]) {
      expect(good).toContain(from);
      writeFileSync(cacheFile, good.replace(from, to));
      const lines: string[] = [];
      const { index: reopened, counts } = await openCached(
        repo,
        cacheFile,
        createLogger({ level: 'warn', write: (line) => lines.push(line) }),
      );
      expect(counts).toEqual({ walked: 5, diffs: 1 });
      expect(await reopened.query({ limit: 500 })).toEqual(expected);
      expect(lines.map((line) => JSON.parse(line))).toEqual([
        expect.objectContaining({ level: 'warn', msg: expect.stringContaining('damaged audit index cache'), file: cacheFile }),
      ]);
      await reopened.close();
    }
  });

  it('reuses the entries of commits still on main when main was rewritten meanwhile', async () => {
    const repo = await openRepository();
    await history(repo);
    const cacheFile = join(tempDir(), 'acme.json');
    const first = await openCached(repo, cacheFile);
    await first.index.saved();
    await first.index.close();

    git(repo.gitdir, ['update-ref', 'refs/heads/main', `${await repo.head()}~1`]);
    await repo.refresh();
    const replacement = await apiCommit(repo, [{ path: layout.configFile('shop', 'prod', 'b'), content: configYaml({ version: 2 }) }], {
      action: 'config_update',
      project: 'shop',
      flag: 'b',
    });
    const second = await openCached(repo, cacheFile);
    // The whole line is walked to find where it left the cached one, but the pushed commit is not diffed again.
    expect(second.counts).toEqual({ walked: 5, diffs: 0 });
    const page = await second.index.query({ limit: 500 });
    expect(page.entries.map((e) => e.action)).toEqual(['config_update', 'kill', 'flag_create', 'flag_create', 'project_create']);
    expect(page.entries[0].id).toBe(replacement);
    await second.index.close();
  });

  it('costs only a warning when it cannot be written', async () => {
    const repo = await openRepository();
    await history(repo);
    const notADirectory = join(tempDir(), 'file');
    writeFileSync(notADirectory, '');
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => lines.push(line) });
    const index = await AuditIndex.open({ repo, logger, cacheFile: join(notADirectory, 'acme.json') });
    await index.saved();
    expect((await index.query({ limit: 500 })).entries).toHaveLength(5);
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([{ level: 'warn', msg: expect.stringContaining('audit index cache') }]);
    await index.close();
  });

  it('lives at <cacheDir>/<org>.json for the registry', async () => {
    const repo = await openRepository();
    await history(repo);
    const cacheDir = join(tempDir(), 'state', 'audit');
    const registry = new AuditRegistry({ repos: { get: async () => repo }, cacheDir });
    const index = await registry.get('acme');
    await index.saved();
    expect(readCache(join(cacheDir, 'acme.json')).commits).toHaveLength(5);
    await registry.closeAll();
    await expect(registry.get('../escape')).rejects.toMatchObject({ code: 'invalid_input', field: 'org' });
  });
});
