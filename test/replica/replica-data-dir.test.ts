import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { StartupError } from '../../src/process/startup-error.js';
import { type ReplicaOptions, startReplica } from '../../src/replica/start-replica.js';
import { httpClient } from '../helpers/http-client.js';
import { fixedPortService } from './fixed-port-service.js';

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
    upstream: upstream.controlUrl,
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
        `the data directory ${dataDir} is in use by another flagops eval replica (pid ${process.pid}); stop that one first, or set --data-dir to another directory`,
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
