import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { fixedPortService } from './fixed-port-service.js';

describe('a replica whose first upstream accepts connections and never answers', () => {
  let hung: net.Server;
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let replica: Replica;
  let dataDir: string;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    // A real socket that takes the connection and says nothing: a control plane hung, not gone.
    hung = net.createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    upstream = await fixedPortService();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-hung-'));
  });
  afterAll(async () => {
    await replica?.stop();
    await upstream.destroy();
    hung.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('moves to the next when the answer does not come within the request deadline, and says why', async () => {
    const hungUrl = `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}`;
    const logger = createLogger({ level: 'warn', write: (line) => logs.push(JSON.parse(line)) });
    replica = await startReplica({
      upstreams: [hungUrl, upstream.controlUrl],
      token: upstream.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logger,
      startTimeoutMs: 0,
    });
    const health = await until(
      async () => (await httpClient(replica.url, upstream.admin).get('/healthz')).body,
      (h) => h.upstream === 'connected',
    );
    expect(health).toMatchObject({ status: 'ok', following: upstream.controlUrl });
    expect(logs.filter((l) => l.msg === 'replica failover')).toEqual([
      expect.objectContaining({ from: hungUrl, to: upstream.controlUrl, reason: 'timeout' }),
    ]);
  });
});
