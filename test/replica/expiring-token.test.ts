import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

describe('a replica given an admin key that expires', () => {
  let svc: TestService;
  let dir: string;
  let replica: Replica | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-'));
  });
  afterAll(async () => {
    await replica?.stop();
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is refused by the control plane (403, saying why) and follows nothing', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const admin = httpClient(svc.controlUrl, svc.admin);
    // A project, so a replica that followed would hold its views.
    expect((await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).status).toBe(201);
    const token = (await admin.post('/api/v1/keys', { kind: 'admin', name: 'replica', expiresAt })).body.key;
    replica = await startReplica({
      upstreams: [svc.controlUrl],
      token,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: createLogger({ level: 'warn', write: (line: string) => logs.push(line) }),
      retryMinMs: 50,
      retryMaxMs: 200,
      startTimeoutMs: 500,
    });
    const lost = await until(
      async () => logs.find((line) => line.includes('upstream lost')),
      (line) => line !== undefined,
    );
    expect(lost).toContain('403');
    expect(lost).toContain(`expiring at ${expiresAt} may not follow the control plane as an evaluation replica`);
    expect(replica.holder.entries()).toEqual([]);
  });

  it('says so as an error naming the key it needs, and /healthz says refused with the answer, not starting', async () => {
    const said = logs.map((line) => JSON.parse(line)).find((entry) => entry.msg.includes('refuses the replica'));
    expect(said).toMatchObject({ level: 'error', msg: expect.stringContaining('it needs an admin key (svc_adm_…) of the organisation') });
    const health = (token?: string) =>
      fetch(`${replica!.url}/healthz`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (res) => ({
        status: res.status,
        body: await res.json(),
      }));
    expect(await health()).toEqual({ status: 503, body: { status: 'refused' } });
    expect(await health(svc.admin)).toMatchObject({ status: 401 });
  });
});

describe('a replica given an admin key the control plane does not know', () => {
  let svc: TestService;
  let dir: string;
  let replica: Replica | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-'));
  });
  afterAll(async () => {
    await replica?.stop();
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('logs the 401 as an error naming the key it needs, and its /healthz says refused with that answer', async () => {
    const token = 'svc_adm_wrongwrongwrongwrongwrongwr';
    replica = await startReplica({
      upstreams: [svc.controlUrl],
      token,
      host: '127.0.0.1',
      port: 0,
      dataDir: dir,
      logger: createLogger({ level: 'warn', write: (line: string) => logs.push(line) }),
      retryMinMs: 50,
      retryMaxMs: 200,
      startTimeoutMs: 500,
    });
    const said = await until(
      async () => logs.map((line) => JSON.parse(line)).find((entry) => entry.msg.includes('refuses the replica')),
      (entry) => entry !== undefined,
    );
    expect(said).toMatchObject({ level: 'error', err: expect.stringContaining('401') });
    const res = await fetch(`${replica.url}/healthz`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'refused', upstream: 'refused', tokenRefused: expect.stringContaining('401') });
  });
});
