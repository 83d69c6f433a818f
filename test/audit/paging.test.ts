import type { AuditEntry, EnvironmentName } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import type { AuditIndex, AuditQuery } from '../../src/features/audit/index.js';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import type { FlagRepository } from '../../src/foundations/storage/index.js';
import { apiCommit, Checkout, configYaml, openIndex, openRepository, seedShop } from './fixtures.js';

const ENVS: EnvironmentName[] = ['dev', 'staging', 'prod'];

/** A config update through the API, `n` making each one different. */
function update(repo: FlagRepository, flag: 'a' | 'b', env: EnvironmentName, n: number): Promise<string> {
  return apiCommit(repo, [{ path: layout.configFile('shop', env, flag), content: configYaml({ rolloutPct: n % 101, version: n + 2 }) }], {
    action: 'config_update',
    project: 'shop',
    flag,
    environment: env,
  });
}

/** shop with 12 API config updates and, in the middle, one engineer commit of 3 entries: 18 entries. */
async function busyRepository(): Promise<FlagRepository> {
  const repo = await openRepository();
  await seedShop(repo);
  // Before and after the push, so that the engineer's commit is in the middle of the trail.
  for (let n = 0; n < 6; n++) await update(repo, n % 2 ? 'b' : 'a', ENVS[n % 3], n);
  const checkout = Checkout.of(repo);
  for (const env of ENVS) checkout.write(layout.configFile('shop', env, 'b'), configYaml({ enabled: true, version: 50 }));
  checkout.commit('Turn b on everywhere');
  await checkout.push(repo);
  for (let n = 6; n < 12; n++) await update(repo, n % 2 ? 'b' : 'a', ENVS[n % 3], n);
  return repo;
}

/** Every page of a query, following nextCursor. */
async function allPages(index: AuditIndex, query: AuditQuery): Promise<AuditEntry[][]> {
  const pages: AuditEntry[][] = [];
  let cursor = query.cursor;
  do {
    const page = await index.query({ ...query, cursor });
    pages.push(page.entries);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

const ids = (entries: AuditEntry[]) => entries.map((e) => `${e.id}/${e.action}/${e.flagKey}/${e.environment}`);

describe('paging through the audit trail', () => {
  it('gives every entry exactly once, newest first, whatever the page size, even inside one commit', async () => {
    const index = await openIndex(await busyRepository());
    const all = (await index.query({ limit: 500 })).entries;
    expect(all).toHaveLength(18);
    for (const limit of [1, 2, 4, 5, 17, 18]) {
      const pages = await allPages(index, { limit });
      expect(ids(pages.flat())).toEqual(ids(all));
      expect(pages.every((page, i) => page.length === (i < pages.length - 1 ? limit : page.length))).toBe(true);
      expect(pages[pages.length - 1].length).toBeGreaterThan(0);
    }
  });

  it('ends with nextCursor null exactly when nothing older matches', async () => {
    const index = await openIndex(await busyRepository());
    expect((await index.query({ limit: 18 })).nextCursor).toBeNull();
    expect((await index.query({ limit: 17 })).nextCursor).not.toBeNull();
    expect((await index.query({ limit: 1, action: 'project_create' })).nextCursor).toBeNull();
  });

  it('is not disturbed by commits that land between pages: they come before the first page', async () => {
    const repo = await busyRepository();
    const index = await openIndex(repo);
    const before = (await index.query({ limit: 500 })).entries;
    const first = await index.query({ limit: 5 });
    const landed = await update(repo, 'a', 'prod', 99);
    const rest = await allPages(index, { limit: 5, cursor: first.nextCursor! });
    expect(ids([...first.entries, ...rest.flat()])).toEqual(ids(before));
    expect((await index.query({ limit: 1 })).entries[0].id).toBe(landed);
  });

  it('pages a filtered query without gaps or duplicates', async () => {
    const index = await openIndex(await busyRepository());
    const all = (await index.query({ limit: 500 })).entries;
    const query = { flagKey: 'b', limit: 2 };
    const expected = all.filter((e) => e.flagKey === 'b');
    expect(expected.length).toBeGreaterThan(4);
    expect(ids((await allPages(index, query)).flat())).toEqual(ids(expected));
  });
});

describe('filters', () => {
  it('by flag, environment, action and project, alone and together', async () => {
    const index = await openIndex(await busyRepository());
    const all = (await index.query({ limit: 500 })).entries;
    const check = async (query: Omit<AuditQuery, 'limit'>, keep: (e: AuditEntry) => boolean) => {
      const got = (await index.query({ ...query, limit: 500 })).entries;
      expect(got.length).toBeGreaterThan(0);
      expect(ids(got)).toEqual(ids(all.filter(keep)));
    };
    await check({ flagKey: 'a' }, (e) => e.flagKey === 'a');
    await check({ environment: 'prod' }, (e) => e.environment === 'prod');
    await check({ action: 'flag_create' }, (e) => e.action === 'flag_create');
    await check({ projectSlug: 'shop' }, (e) => e.projectSlug === 'shop');
    await check({ flagKey: 'b', environment: 'staging', action: 'config_update' }, (e) => e.flagKey === 'b' && e.environment === 'staging');
    expect((await index.query({ projectSlug: 'web', limit: 50 })).entries).toEqual([]);
  });
});

describe('bad input', () => {
  it('refuses a cursor it did not give out with InvalidInputError naming cursor', async () => {
    const index = await openIndex(await busyRepository());
    const valid = (await index.query({ limit: 1 })).nextCursor!;
    const decoded = Buffer.from(valid, 'base64url').toString();
    const forged = [
      'not a cursor!',
      '',
      Buffer.from('hello').toString('base64url'),
      Buffer.from(`${'0'.repeat(40)}:0`).toString('base64url'),
      Buffer.from(decoded.replace(/:\d+$/, ':7')).toString('base64url'),
      `${valid}x`,
    ];
    for (const cursor of forged) {
      const failure = await index.query({ limit: 5, cursor }).catch((err) => err);
      expect(failure, cursor).toBeInstanceOf(InvalidInputError);
      expect(failure.field).toBe('cursor');
      expect(failure.code).toBe('invalid_input');
    }
  });

  it('refuses a limit outside 1..500, naming limit', async () => {
    const index = await openIndex(await busyRepository());
    for (const limit of [0, 501, 1.5, Number.NaN]) {
      await expect(index.query({ limit })).rejects.toMatchObject({ code: 'invalid_input', field: 'limit' });
    }
  });
});
