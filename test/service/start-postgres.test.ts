import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from './service-process.js';

/** Starting the service with its state in PostgreSQL: the first start hands out its admin key; a bad database says so. */
describe.skipIf(POSTGRES_MISSING !== null)('starting the service on PostgreSQL', () => {
  let dir: string;
  let cluster: PostgresCluster;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-start-pg-'));
    cluster = await PostgresCluster.start();
    bundle = await bundleMain();
  }, 60_000);
  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    await cluster?.destroy();
    await bundle?.remove();
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (databaseUrl: string, name: string) => {
    const control = await freePort();
    const env = {
      FLAGOPS_DATA_DIR: path.join(dir, name),
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(await freePort()),
      FLAGOPS_DATABASE_URL: databaseUrl,
      FLAGOPS_BOOTSTRAP_KEYS: '',
    };
    const p = startProcess(bundle.entry, env);
    running.push(p);
    return { p, dataDir: env.FLAGOPS_DATA_DIR, controlUrl: `http://127.0.0.1:${control}` };
  };

  it('with a new database and no keys, leaves the first admin key in the data directory, and the key works', async () => {
    const { p, dataDir, controlUrl } = await start(await cluster.createDatabase(), 'first');
    await waitHealthy(`${controlUrl}/healthz`, p.child);
    const key = (await readFile(path.join(dataDir, 'state', 'initial-admin-key'), 'utf8')).trim();
    expect((await httpClient(controlUrl, key).get('/api/v1/projects')).status).toBe(200);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('refuses to start on a database it cannot reach, in one line naming the setting, without the password or a stack trace', async () => {
    const port = await freePort();
    const { p } = await start(`postgres://flagops:s3cret-word@127.0.0.1:${port}/flagops`, 'unreachable');
    expect(await p.exit).toBe(1);
    const said = p.stderr.join('');
    expect(said).toMatch(
      /^flagops: FLAGOPS_DATABASE_URL: the database cannot be used: .+; check the URL and that PostgreSQL is running\n$/,
    );
    expect(said).not.toContain('s3cret-word');
  });
});
