/**
 * docs/deployment.md's walk-through of two control planes, PostgreSQL, a git remote and two replicas on one
 * machine, run word for word in bash from a directory standing for the built checkout. Only the ports (4000,
 * 4001, 4100, 4101, 4201, 4202 may be taken on a test machine) change; the directory the walk-through makes for
 * itself is made inside the test's (TMPDIR); the database is a PostgreSQL cluster of the test's own, given in
 * FLAGOPS_DATABASE_URL as the walk-through asks.
 */
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { freePort } from '../service/service-process.js';
import { runBlock, shellBlocks } from './doc-blocks.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe.skipIf(POSTGRES_MISSING !== null)("the deployment guide's several control planes on one machine", () => {
  let base: string;
  let cluster: PostgresCluster;
  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'flagops-walkthrough-'));
    for (const name of ['package.json', 'dist', 'node_modules', 'schemas']) await symlink(path.join(ROOT, name), path.join(base, name));
    await mkdir(path.join(base, 'home'));
    cluster = await PostgresCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
    await rm(base, { recursive: true, force: true });
  });

  it('serves a change and a kill made through either control plane everywhere, and goes on through B when A dies', async () => {
    const guide = await readFile(path.join(ROOT, 'docs/deployment.md'), 'utf8');
    const blocks = shellBlocks(guide, 'Several control planes on one machine');
    expect(blocks).toHaveLength(1);
    let script = blocks[0];
    const ports: Record<string, number> = {};
    for (const port of ['4000', '4001', '4100', '4101', '4201', '4202']) {
      ports[port] = await freePort();
      script = script.replaceAll(new RegExp(`\\b${port}\\b`, 'g'), String(ports[port]));
    }
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: path.join(base, 'home'),
      TMPDIR: path.join(base, 'home'),
      FLAGOPS_DATABASE_URL: await cluster.createDatabase(),
      FLAGOPS_LOG_LEVEL: 'error',
    };
    // Whatever the block leaves running when it fails is stopped with the shell's process group.
    const { code, out } = await runBlock(`set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}`, base, env);
    expect(code, out).toBe(0);
    const answers = out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    expect(answers.slice(0, 4).map((a) => a.checkout)).toEqual(Array(4).fill(expect.objectContaining({ value: true })));
    expect(answers.slice(4, 8).map((a) => a.checkout)).toEqual(Array(4).fill(expect.objectContaining({ value: false, reason: 'killed' })));
    expect(answers[8].checkout).toMatchObject({ value: true });
    expect(answers[9]).toMatchObject({ status: 'ok', upstream: 'connected', following: `http://127.0.0.1:${ports['4100']}` });
  }, 90_000);
});
