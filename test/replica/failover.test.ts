import { cpSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { startGitServer } from '../remote/git-server.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from '../service/service-process.js';

/** A control plane as its own process, in remote mode on the test's git host, on a port that survives restarts. */
interface ControlPlane {
  url: string;
  dataDir: string;
  process: ServiceProcess;
}

describe('a replica following two control planes on one git remote', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let service: Awaited<ReturnType<typeof bundleMain>>;
  let cli: Awaited<ReturnType<typeof bundleMain>>;
  let dir: string;
  const admin = generateKey('admin');
  const running: ServiceProcess[] = [];

  const launch = async (name: string, port: number): Promise<ControlPlane> => {
    const dataDir = path.join(dir, name);
    const env = {
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(port),
      FLAGOPS_EVAL_PORT: String(await freePort()),
      FLAGOPS_BOOTSTRAP_KEYS: `acme:${admin}`,
      FLAGOPS_GIT_REMOTE: host.url,
      // No polling: a control plane learns of the other's commits only when it writes (its push is refused and
      // it fetches), so the test decides when one is behind.
      FLAGOPS_GIT_POLL_SECONDS: '0',
      FLAGOPS_LOG_LEVEL: 'error',
    };
    const child = startProcess(service.entry, env);
    running.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(`${url}/healthz`, child.child);
    return { url, dataDir, process: child };
  };
  const sigkill = async (cp: ControlPlane) => {
    cp.process.child.kill('SIGKILL');
    await cp.process.exit;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-failover-'));
    host = await startGitServer();
    [service, cli] = await Promise.all([bundleMain(), bundleMain({ source: 'src/apps/cli/main.ts' })]);
  });
  afterAll(async () => {
    for (const child of running) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(running.map((child) => child.exit));
    await host?.stop();
    await Promise.all([service?.remove(), cli?.remove()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('moves to the other when the one it follows is killed, never serves what that one has not seen yet, and comes back', async () => {
    const [portA, portB, replicaPort] = [await freePort(), await freePort(), await freePort()];
    let a = await launch('a', portA);
    const viaA = httpClient(a.url, admin);
    const project = (await viaA.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const checkout = (await viaA.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    expect((await viaA.put(`/api/v1/flags/${checkout.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    const sdkKey = (await viaA.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    // Without a shared database each control plane keeps its keys in its data directory: B starts with A's.
    mkdirSync(path.join(dir, 'b', 'state'), { recursive: true });
    for (const file of ['keys.json', 'pepper']) cpSync(path.join(a.dataDir, 'state', file), path.join(dir, 'b', 'state', file));
    const b = await launch('b', portB);
    const viaB = httpClient(b.url, admin);

    const replicaUrl = `http://127.0.0.1:${replicaPort}`;
    const replica = startProcess(cli.entry, { FLAGOPS_REPLICA_TOKEN: admin, FLAGOPS_DATA_DIR: path.join(dir, 'replica') }, [
      'eval',
      '--upstream',
      `${a.url},${b.url}`,
      '--port',
      String(replicaPort),
    ]);
    running.push(replica);
    await waitHealthy(`${replicaUrl}/healthz`, replica.child);
    const sdk = httpClient(replicaUrl, sdkKey);
    const evaluate = async (key: string) => (await sdk.post('/v1/evaluate', { key, context: { userId: 'u1' } })).body[key];
    const health = async () => (await httpClient(replicaUrl, admin).get('/healthz')).body;
    expect(await health()).toMatchObject({ status: 'ok', upstream: 'connected', following: a.url });
    expect(await evaluate('checkout')).toMatchObject({ value: true });

    // A kill through A reaches the replica; B, which does not poll, has not seen it.
    expect((await viaA.post(`/api/v1/flags/${checkout.id}/environments/prod/kill`)).status).toBe(200);
    await until(
      () => evaluate('checkout'),
      (result) => result?.reason === 'killed',
    );

    await sigkill(a);
    const onB = await until(health, (h) => h.following === b.url && h.upstream === 'connected');
    expect(onB).toMatchObject({ status: 'ok', behind: ['shop/prod'] });
    expect(await evaluate('checkout')).toMatchObject({ value: false, reason: 'killed' });
    const failover = replica.stderr
      .join('')
      .split('\n')
      .filter((line) => line.includes('"replica failover"'))
      .map((line) => JSON.parse(line));
    expect(failover).toEqual([expect.objectContaining({ level: 'warn', from: a.url, to: b.url, reason: expect.any(String) })]);
    expect(replica.stderr.join('')).toContain('upstream is behind what this replica serves');

    // A change through B: B fetches the kill on its way (its push is refused, it rebases), so it caught up.
    const banner = (await viaB.post(`/api/v1/projects/${project.id}/flags`, { key: 'banner' })).body;
    expect((await viaB.put(`/api/v1/flags/${banner.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    await until(
      () => evaluate('banner'),
      (result) => result?.value === true,
    );
    expect(await evaluate('checkout')).toMatchObject({ value: false, reason: 'killed' });
    const caughtUp = await until(health, (h) => h.behind === undefined);
    expect(caughtUp).toMatchObject({ status: 'ok', following: b.url });

    // A again (it fetches the remote at start), B killed: the replica comes back to A and serves what A changes.
    a = await launch('a', portA);
    await sigkill(b);
    expect((await viaA.put(`/api/v1/flags/${banner.id}/environments/prod/config`, { rolloutPct: 0 })).status).toBe(200);
    await until(
      () => evaluate('banner'),
      (result) => result?.value === false && result.reason !== 'killed',
    );
    expect(await health()).toMatchObject({ status: 'ok', upstream: 'connected', following: a.url });
    expect(await evaluate('checkout')).toMatchObject({ reason: 'killed' });
  }, 120_000);
});
