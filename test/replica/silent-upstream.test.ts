import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { fixedPortService } from './fixed-port-service.js';

/**
 * A TCP relay to the control plane that can freeze: connections stay open and nothing more passes either way,
 * which is what a replica sees of a control plane that hangs (stopped by SIGSTOP, swapping) rather than dies.
 */
async function freezableRelay(port: number) {
  const pairs: Array<[net.Socket, net.Socket]> = [];
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    pairs.push([client, upstream]);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    if (frozen) return;
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close() {
      for (const pair of pairs) for (const socket of pair) socket.destroy();
      server.close();
    },
  };
}

describe('a replica whose control plane hangs with the feed open', () => {
  let upstream: Awaited<ReturnType<typeof fixedPortService>>;
  let relay: Awaited<ReturnType<typeof freezableRelay>>;
  let replica: Replica;
  let dataDir: string;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    upstream = await fixedPortService();
    relay = await freezableRelay(Number(new URL(upstream.controlUrl).port));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-silent-'));
  });
  afterAll(async () => {
    await replica?.stop();
    relay?.close();
    await upstream?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('moves to the next control plane within seconds of the silence and serves a kill made meanwhile', async () => {
    const admin = httpClient(upstream.controlUrl, upstream.admin);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const flag = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const logger = createLogger({ level: 'warn', write: (line) => logs.push(JSON.parse(line)) });
    replica = await startReplica({
      upstreams: [relay.url, upstream.controlUrl],
      token: upstream.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logger,
    });
    const evaluate = async (): Promise<Json> =>
      (await httpClient(replica.url, sdkKey).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u1' } })).body.checkout;
    await until(evaluate, (v) => v?.value === true);
    expect((await httpClient(replica.url, upstream.admin).get('/healthz')).body).toMatchObject({ following: relay.url });

    relay.freeze();
    const killedAt = Date.now();
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'incident' })).status).toBe(200);
    // Three missed heartbeats of a second, then the next control plane: well within the 5 s a failover may take,
    // where a silence of 20 s was waited for before.
    await until(evaluate, (v) => v?.reason === 'killed', 8_000);
    expect(Date.now() - killedAt).toBeLessThan(8_000);
    expect(logs.filter((l) => l.msg === 'replica failover')).toEqual([
      expect.objectContaining({ from: relay.url, to: upstream.controlUrl, reason: 'silent' }),
    ]);
  }, 20_000);
});
