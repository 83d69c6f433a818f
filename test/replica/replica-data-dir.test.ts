import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReplicaOptions, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { LOCK_FILE } from '../../src/foundations/process/data-dir-lock.js';
import { StartupError } from '../../src/foundations/process/startup-error.js';
import { PROMPTLY_MS, until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { bundleMain, freePort, type ServiceProcess, startProcess } from '../service/service-process.js';
import { fixedPortService } from './fixed-port-service.js';

/** Resolves once `flagops eval` says it serves; rejects with its stderr if it exits first. */
function serving(replica: ServiceProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    replica.child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      if (out.includes('flagops eval: serving')) resolve();
    });
    replica.exit.then((code) => reject(new Error(`exited with ${code}: ${replica.stderr.join('')}`)));
    setTimeout(() => reject(new Error(`not serving within ${PROMPTLY_MS} ms: ${replica.stderr.join('')}`)), PROMPTLY_MS).unref();
  });
}

describe('a replica’s data directory (one replica each, like the service)', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let dir: string;
  let squatter: Server;
  let taken: number;

  beforeAll(async () => {
    upstream = await fixedPortService();
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-dir-'));
    squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    taken = (squatter.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
    await upstream.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const options = (dataDir: string, port = 0): ReplicaOptions => ({
    upstreams: [upstream.controlUrl],
    token: upstream.admin,
    host: '127.0.0.1',
    port,
    dataDir,
    logger: silentLogger,
    startTimeoutMs: 500,
  });

  it('refuses a second replica on the same data directory, naming it and the pid, until the first stops', async () => {
    const dataDir = path.join(dir, 'one');
    const first = await startReplica(options(dataDir));
    try {
      const second = startReplica(options(dataDir));
      await expect(second).rejects.toBeInstanceOf(StartupError);
      await expect(second).rejects.toThrow(
        `the data directory ${dataDir} is in use by another flagops eval replica (pid ${process.pid}); stop that one first, or set --data-dir (or FLAGOPS_DATA_DIR) to another directory`,
      );
    } finally {
      await first.stop();
    }
    const again = await startReplica(options(dataDir));
    await again.stop();
    expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(false);
  });

  it('refuses a port in use, naming --port, before its data directory is made', async () => {
    const dataDir = path.join(dir, 'port-taken');
    const attempt = startReplica(options(dataDir, taken));
    await expect(attempt).rejects.toThrow(
      `port ${taken} on 127.0.0.1 is in use; stop what uses it, or set --port (or FLAGOPS_EVAL_PORT) to a free port`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('takes its directory from --data-dir, else FLAGOPS_DATA_DIR: two replicas started in one directory each use their own', async () => {
    const cli = await bundleMain({ source: 'src/apps/cli/main.ts' });
    const cwd = path.join(dir, 'checkout');
    const [a, b, c] = ['a', 'b', 'c'].map((name) => path.join(dir, 'env', name));
    await mkdir(cwd);
    const start = (env: Record<string, string>, args: string[] = []) =>
      startProcess(
        cli.entry,
        { FLAGOPS_REPLICA_TOKEN: upstream.admin, ...env },
        ['eval', '--upstream', upstream.controlUrl, '--port', '0', ...args],
        cwd,
      );
    const replicas = [start({ FLAGOPS_DATA_DIR: a }), start({ FLAGOPS_DATA_DIR: b }), start({ FLAGOPS_DATA_DIR: a }, ['--data-dir', c])];
    try {
      await Promise.all(replicas.map(serving));
      for (const dataDir of [a, b, c]) expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(true);
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      for (const replica of replicas) replica.child.kill('SIGTERM');
      await Promise.all(replicas.map((r) => r.exit));
      await cli.remove();
    }
    expect(await Promise.all(replicas.map((r) => r.exit))).toEqual([0, 0, 0]);
    for (const dataDir of [a, b, c]) expect(existsSync(path.join(dataDir, 'replica', 'pepper'))).toBe(true);
    for (const replica of replicas) expect(replica.stderr.join('')).toContain('"msg":"flagops eval stopped"');
  });

  it('stops cleanly on SIGTERM while it still waits for its first sync, its lock removed', async () => {
    const cli = await bundleMain({ source: 'src/apps/cli/main.ts' });
    const dataDir = path.join(dir, 'stopped-starting');
    // Nothing listens there: the replica waits for a first sync that cannot come.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const replica = startProcess(cli.entry, { FLAGOPS_REPLICA_TOKEN: upstream.admin, FLAGOPS_DATA_DIR: dataDir }, [
      'eval',
      '--upstream',
      nowhere,
      '--port',
      '0',
    ]);
    try {
      await until(async () => existsSync(path.join(dataDir, LOCK_FILE)), Boolean);
      replica.child.kill('SIGTERM');
      expect(await replica.exit).toBe(0);
    } finally {
      replica.child.kill('SIGKILL');
      await cli.remove();
    }
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    const log = replica.stderr.join('');
    expect(log).toContain('"msg":"stopping","signal":"SIGTERM"');
    expect(log).toContain('"msg":"flagops eval stopped"');
  });

  it('keeps its files owner-only, saved snapshots included', async () => {
    const admin = httpClient(upstream.controlUrl, upstream.admin);
    expect((await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).status).toBe(201);
    const dataDir = path.join(dir, 'modes');
    const replica = await startReplica(options(dataDir));
    await replica.stop();
    expect(readdirSync(path.join(dataDir, 'replica', 'snapshots'))).toHaveLength(3);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    for (const file of files) expect([file.name, statSync(path.join(file.parentPath, file.name)).mode & 0o077]).toEqual([file.name, 0]);
  });
});
