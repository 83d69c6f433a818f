import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleMain, freePort, startProcess, waitHealthy } from './service-process.js';

describe('the service process', () => {
  let dir: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-process-'));
    bundle = await bundleMain();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await bundle.remove();
  });

  const start = (env: Record<string, string>) => startProcess(bundle.entry, env);

  it('starts with zero configuration, answers /healthz on both ports, and hands out a first admin key', async () => {
    const dataDir = path.join(dir, 'zero');
    const [control, evaluation] = [await freePort(), await freePort()];
    const { child, stderr } = start({
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
    });
    try {
      await waitHealthy(`http://127.0.0.1:${control}/healthz`, child);
      expect((await fetch(`http://127.0.0.1:${evaluation}/healthz`)).status).toBe(200);
      const key = (await readFile(path.join(dataDir, 'state', 'initial-admin-key'), 'utf8')).trim();
      expect(key).toMatch(/^svc_adm_/);
      expect(stderr.join('')).toContain('initial-admin-key');
      expect(stderr.join('')).not.toContain(key);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('stops cleanly on SIGTERM with exit code 0 and structured logs', async () => {
    const dataDir = path.join(dir, 'sigterm');
    const [control, evaluation] = [await freePort(), await freePort()];
    const { child, stderr } = start({
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
      FLAGOPS_BOOTSTRAP_KEYS: 'acme:svc_adm_processtestadmin0000000000001',
    });
    await waitHealthy(`http://127.0.0.1:${control}/healthz`, child);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = stderr.join('').trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('flagops stopped');
  });

  it('refuses a bad setting with a clear message and exit code 2', async () => {
    const { child, stderr } = start({ FLAGOPS_DATA_DIR: path.join(dir, 'bad'), FLAGOPS_CONTROL_PORT: 'eighty' });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr.join('')).toMatch(/FLAGOPS_CONTROL_PORT must be a port number/);
  });
});
