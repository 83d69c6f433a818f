import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openControlState } from '../../src/foundations/state/index.js';
import { FlagRepository } from '../../src/foundations/storage/index.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { flagops } from './cli-harness.js';

describe.skipIf(POSTGRES_MISSING !== null)('flagops import with the state in PostgreSQL', () => {
  let cluster: PostgresCluster;
  let dataDir: string;
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    dataDir = mkdtempSync(join(tmpdir(), 'flagops-import-pg-'));
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("signs its commit with the database's key, so a service on that database believes what it says", async () => {
    const databaseUrl = await cluster.createDatabase();
    const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', dataDir, '--create'], undefined, {
      FLAGOPS_DATABASE_URL: databaseUrl,
    });
    expect(result.code, result.stderr).toBe(0);
    const state = await openControlState({ dataDir, databaseUrl });
    const repo = await FlagRepository.open({ gitdir: join(dataDir, 'repos/acme.git'), signingKey: await state.commitTrust.signingKey() });
    try {
      const head = await repo.head();
      expect((await repo.readCommit(head!)).flagops).toMatchObject({ action: 'import', actor: { type: 'admin' } });
    } finally {
      await repo.close();
      await state.close();
    }
  });
});
