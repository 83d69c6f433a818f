import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { fillDisk, smallDisk } from '../helpers/disk-faults.js';
import { httpClient } from '../helpers/http-client.js';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from './service-process.js';

/** Every state file's name and the sha256 of its bytes. */
function stateFiles(dataDir: string): Record<string, string> {
  const dir = path.join(dataDir, 'state');
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return files;
}

const stackTrace = /^\s+at /m;

describe('a (re)start on a full disk', () => {
  let disk: string | undefined;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;
  const running: ServiceProcess[] = [];
  const admin = generateKey('admin');

  beforeAll(async () => {
    disk = await smallDisk('8m');
    if (!disk) {
      // Said, as for a missing tool: CI runs as root on a machine that lets it mount, and runs them.
      process.stderr.write(
        '\nthe full-disk start tests did not run: they mount an 8 MiB tmpfs, which needs root and permission to mount\n\n',
      );
      return;
    }
    bundle = await bundleMain();
  });
  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    await bundle?.remove();
    if (!disk) return;
    execFileSync('umount', ['--lazy', disk]);
    await rm(disk, { recursive: true, force: true });
  });

  async function start(dataDir: string) {
    const control = await freePort();
    const evaluation = await freePort();
    const p = startProcess(bundle.entry, {
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
      FLAGOPS_BOOTSTRAP_KEYS: `acme:${admin}`,
    });
    running.push(p);
    return { p, controlUrl: `http://127.0.0.1:${control}`, evalUrl: `http://127.0.0.1:${evaluation}` };
  }

  async function startServing(dataDir: string) {
    const started = await start(dataDir);
    await waitHealthy(`${started.controlUrl}/healthz`, started.p.child, 60_000);
    return started;
  }

  it('serves evaluation, reports the write fault and refuses writes with 503, after a stop or a crash, and writes nothing', async ({
    skip,
  }) => {
    if (!disk) return skip();
    const dataDir = path.join(disk, 'data');
    const first = await startServing(dataDir);
    const control = httpClient(first.controlUrl, admin);
    const project = (await control.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const flag = (await control.post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout' })).body;
    expect((await control.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    const sdkKey = (await control.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    first.p.child.kill('SIGTERM');
    expect(await first.p.exit).toBe(0);
    const before = stateFiles(dataDir);
    const head = readFileSync(path.join(dataDir, 'repos', 'acme.git', 'refs', 'heads', 'main'), 'utf8');
    fillDisk(path.join(disk, 'filler'));

    // Restarted on the full disk (after a clean stop), then again after a crash of that one.
    for (const stop of ['SIGKILL', 'SIGTERM'] as const) {
      const svc = await startServing(dataDir);
      const evaluated = await httpClient(svc.evalUrl, sdkKey).post('/v1/evaluate', { key: 'checkout', context: { userId: 'u-1' } });
      expect([evaluated.status, evaluated.body.checkout?.value]).toEqual([200, true]);
      const health = await httpClient(svc.controlUrl, admin).get('/healthz');
      expect(health.body.status).toBe('degraded');
      expect(health.body.organisations[0].fault).toMatchObject({ kind: 'write', message: 'no space left on the device (ENOSPC)' });
      const write = await httpClient(svc.controlUrl, admin).put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 });
      expect([write.status, write.body.error?.code]).toEqual([503, 'unavailable']);
      expect(write.body.error.message).toContain('no space left on the device (ENOSPC)');
      // (A stop on the full disk cannot flush the evaluation counts: that is the stop's own matter.)
      svc.p.child.kill(stop);
      await svc.p.exit;
      expect(svc.p.stderr.join('')).not.toMatch(stackTrace);
    }
    expect(stateFiles(dataDir)).toEqual(before);
    expect(readFileSync(path.join(dataDir, 'repos', 'acme.git', 'refs', 'heads', 'main'), 'utf8')).toBe(head);

    // Once there is room again, a start writes as ever.
    rmSync(path.join(disk, 'filler'));
    const after = await startServing(dataDir);
    expect((await httpClient(after.controlUrl, admin).get('/healthz')).body.status).toBe('ok');
    const write = await httpClient(after.controlUrl, admin).put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 50 });
    expect(write.status).toBe(200);
    after.p.child.kill('SIGTERM');
    expect(await after.p.exit).toBe(0);
  }, 120_000);

  it('that must make a state file (a first start) stops with one line naming the file and the fault, no stack', async ({ skip }) => {
    if (!disk) return skip();
    const dataDir = path.join(disk, 'new-data');
    fillDisk(path.join(disk, 'filler'));
    try {
      const { p } = await start(dataDir);
      expect(await p.exit).toBe(1);
      const message = p.stderr.join('');
      expect(message.trim().split('\n')).toHaveLength(1);
      expect(message).toMatch(/^flagops: .* cannot be written: no space left on the device \(ENOSPC\)\n$/);
      expect(message).not.toMatch(stackTrace);
      expect(existsSync(path.join(dataDir, 'flagops.lock'))).toBe(false);
    } finally {
      rmSync(path.join(disk, 'filler'));
    }
  }, 60_000);
});
