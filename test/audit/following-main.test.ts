import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditRegistry } from '../../src/features/audit/index.js';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { apiCommit, Checkout, configYaml, git, openIndex, openRepository, seedShop } from './fixtures.js';

const enable = (repo: FlagRepository, version: number) =>
  apiCommit(repo, [{ path: layout.configFile('shop', 'dev', 'a'), content: configYaml({ enabled: true, version }) }], {
    action: 'config_update',
    project: 'shop',
    flag: 'a',
    environment: 'dev',
  });

describe('an audit index following main', () => {
  it('shows a commit made through the same repository as soon as the update returns', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const commit = await enable(repo, 2);
    expect((await index.query({ limit: 1 })).entries[0].id).toBe(commit);
  });

  it('picks up commits another process wrote once the repository notices main moved', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const other = await FlagRepository.open({ gitdir: repo.gitdir, durable: false });
    const first = await enable(other, 2);
    const second = await enable(other, 3);
    await other.close();
    expect((await index.query({ limit: 1 })).entries[0].id).not.toBe(second);
    await repo.refresh();
    expect((await index.query({ limit: 2 })).entries.map((e) => e.id)).toEqual([second, first]);
  });

  it('rebuilds when main is rewritten, dropping what left main and refusing cursors into it', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const kept = await repo.head();
    const dropped = await enable(repo, 2);
    await enable(repo, 3);
    const index = await openIndex(repo);
    const cursorIntoDropped = (await index.query({ limit: 1 })).nextCursor!;

    // An administrator resets main by hand; the service's own pushes refuse non-fast-forwards.
    git(repo.gitdir, ['update-ref', 'refs/heads/main', kept!]);
    await repo.refresh();
    const replacement = await enable(repo, 7);

    const { entries } = await index.query({ limit: 500 });
    expect(entries.map((e) => e.id)).toEqual([replacement, ...(await repo.firstParentLog({ from: kept })).map((c) => c.oid)]);
    expect(entries.some((e) => e.id === dropped)).toBe(false);
    const failure = await index.query({ limit: 5, cursor: cursorIntoDropped }).catch((err) => err);
    expect(failure).toBeInstanceOf(InvalidInputError);
    expect(failure.field).toBe('cursor');
  });

  it('keeps cursors into commits still on main valid across a rebuild', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    // The page ends at the second newest commit, which stays on main's first-parent line; the newest does not.
    const page = await index.query({ limit: 2 });
    // An engineer merges main into a branch and pushes it: a fast-forward whose first parent is not the old head.
    const checkout = Checkout.of(repo);
    checkout.git(['checkout', '--quiet', '-b', 'side', 'HEAD~1']);
    checkout.write(layout.configFile('shop', 'prod', 'a'), configYaml({ rolloutPct: 3, version: 2 })).commit('Side change');
    checkout.git(['merge', '--quiet', '--no-ff', '-m', 'Merge main into side', 'main']);
    await checkout.push(repo);

    const all = (await index.query({ limit: 500 })).entries;
    expect(all[0].message).toBe('Merge main into side');
    const rest = await index.query({ limit: 500, cursor: page.nextCursor! });
    const position = all.findIndex((e) => e.id === page.entries[1].id);
    expect(position).toBeGreaterThan(0);
    expect(all.some((e) => e.id === page.entries[0].id)).toBe(false);
    expect(rest.entries).toEqual(all.slice(position + 1));
  });

  it('keeps serving what it has when main cannot be read, and catches up on the next query', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const before = await index.query({ limit: 500 });
    const other = await FlagRepository.open({ gitdir: repo.gitdir, durable: false });
    const landed = await enable(other, 2);
    await other.close();
    const ref = join(repo.gitdir, 'refs', 'heads', 'main');
    writeFileSync(ref, `${'e'.repeat(40)}\n`);
    await repo.refresh();
    expect(await index.query({ limit: 500 })).toEqual(before);
    // Put right without an announcement: only the query's retry can find it.
    writeFileSync(ref, `${landed}\n`);
    expect((await index.query({ limit: 1 })).entries[0].id).toBe(landed);
  });

  it('stops following main once closed', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const index = await openIndex(repo);
    const before = await index.query({ limit: 500 });
    await index.close();
    await enable(repo, 2);
    expect(await index.query({ limit: 500 })).toEqual(before);
  });
});

describe('AuditRegistry', () => {
  it('builds one index per organisation, even when first asked for it several times at once', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const asked: string[] = [];
    const registry = new AuditRegistry({
      repos: {
        get: async (org) => {
          asked.push(org);
          return repo;
        },
      },
    });
    const [one, two, three] = await Promise.all([registry.get('acme'), registry.get('acme'), registry.get('acme')]);
    expect(one).toBe(two);
    expect(two).toBe(three);
    expect(asked).toEqual(['acme']);
    expect((await one.query({ limit: 500 })).entries).toHaveLength(3);
    await registry.closeAll();
  });

  it('does not remember a failed build, and closeAll stops every index following', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    let fail = true;
    const registry = new AuditRegistry({
      repos: {
        get: async (org) => {
          if (fail) throw new Error(`no repository for ${org}`);
          return repo;
        },
      },
    });
    await expect(registry.get('acme')).rejects.toThrow('no repository for acme');
    fail = false;
    const index = await registry.get('acme');
    await registry.closeAll();
    await enable(repo, 2);
    expect((await index.query({ limit: 500 })).entries).toHaveLength(3);
    expect(await registry.get('acme')).not.toBe(index);
    await registry.closeAll();
  });

  it('fails to build while main names a commit that cannot be read, and builds on the next call', async () => {
    const repo = await openRepository();
    await seedShop(repo);
    const head = (await repo.head())!;
    const ref = join(repo.gitdir, 'refs', 'heads', 'main');
    writeFileSync(ref, `${'e'.repeat(40)}\n`);
    const registry = new AuditRegistry({ repos: { get: async () => repo } });
    await expect(registry.get('acme')).rejects.toThrow(/git object e{12} is missing/);
    writeFileSync(ref, `${head}\n`);
    expect((await (await registry.get('acme')).query({ limit: 500 })).entries).toHaveLength(3);
    await registry.closeAll();
  });
});
