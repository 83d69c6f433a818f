import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSigningKey } from '../../src/storage/commit-trust.js';
import { FlagRepository } from '../../src/storage/index.js';
import { flagops, sampleCopy } from './cli-harness.js';

describe('flagops import', () => {
  let dataDir: string;
  const cleanups: Array<() => void> = [];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagops-data-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  async function readMain() {
    // With the data directory's signing key, as the service reads it, so the import's trailers are believed.
    const repo = await FlagRepository.open({ gitdir: join(dataDir, 'repos/acme.git'), signingKey: await loadSigningKey(join(dataDir, 'state')) });
    try {
      const head = await repo.head();
      return { head, loaded: await repo.readState(), commit: head ? await repo.readCommit(head) : null };
    } finally {
      await repo.close();
    }
  }

  it('commits the sample repository into the organisation, as one import commit', async () => {
    const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir, '--actor', 'alice']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^imported 1 project\(s\), 4 flag\(s\) into acme: commit [0-9a-f]{40}\n$/);

    const { loaded, commit } = await readMain();
    expect(loaded.issues).toEqual([]);
    expect([...loaded.state.projects.get('shop')!.flags.keys()]).toEqual(['checkout-v2', 'holiday-banner', 'max-cart-items', 'search-ranking']);
    expect(Object.keys(loaded.state.projects.get('shop')!.kills.staging.kills)).toEqual(['search-ranking']);
    expect(commit!.flagops).toMatchObject({ action: 'import', project: 'shop', actor: { type: 'admin', name: 'alice' } });
  });

  it('makes no commit when the repository already holds the same files', async () => {
    await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir]);
    const { head } = await readMain();
    const again = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir]);
    expect(again).toMatchObject({ code: 0, stdout: 'nothing to import: acme already holds 1 project(s), 4 flag(s) as in flags\n' });
    expect((await readMain()).head).toBe(head);
  });

  it('mirrors an imported project: a flag the directory no longer has is deleted', async () => {
    await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir]);
    const copy = sampleCopy();
    cleanups.push(copy.remove);
    for (const path of ['flags', 'environments/dev', 'environments/staging', 'environments/prod']) unlinkSync(join(copy.dir, 'projects/shop', path, 'max-cart-items.yaml'));
    expect((await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir])).code).toBe(0);
    expect([...(await readMain()).loaded.state.projects.get('shop')!.flags.keys()]).not.toContain('max-cart-items');
  });

  it('refuses an invalid directory with its issues and writes nothing', async () => {
    const copy = sampleCopy();
    cleanups.push(copy.remove);
    writeFileSync(join(copy.dir, 'projects/shop/flags/checkout-v2.yaml'), 'key: checkout\n');
    const result = await flagops(['import', copy.dir, '--org', 'acme', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('projects/shop/flags/checkout-v2.yaml: /key: must equal the file name "checkout-v2" (found "checkout")');
    expect(result.stderr).toContain('nothing was imported');
    await expect(FlagRepository.open({ gitdir: join(dataDir, 'repos/acme.git') })).rejects.toThrow(/not a git repository/);
  });

  it('needs --org', async () => {
    expect(await flagops(['import', 'flags', '--data-dir', dataDir])).toMatchObject({ code: 2, stderr: expect.stringContaining('--org is required') });
  });
});
