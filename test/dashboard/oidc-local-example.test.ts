import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jarFetch, signInAtProvider } from '../helpers/oidc-provider.mjs';
import { bundleMain, freePort, type ServiceProcess, startProcess, waitHealthy } from '../service/service-process.js';

/**
 * docs/dashboard.md's "Try it locally": the local provider script and the service started with the documented
 * FLAGOPS_OIDC_* variables (read by the real configuration code, in its own process), on free ports.
 */
describe('single sign-on: the local example of docs/dashboard.md', () => {
  let provider: ChildProcess;
  let svc: ServiceProcess;
  let bundle: { entry: string; remove: () => Promise<void> };
  let dataDir: string;
  let controlUrl: string;

  beforeAll(async () => {
    const [providerPort, controlPort, evalPort] = [await freePort(), await freePort(), await freePort()];
    controlUrl = `http://127.0.0.1:${controlPort}`;
    provider = spawn(
      process.execPath,
      ['scripts/oidc-dev-provider.mjs', '--port', String(providerPort), '--redirect-uri', `${controlUrl}/auth/oidc/callback`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      provider.stdout!.on('data', (chunk) => String(chunk).includes('issuer ') && resolve());
      provider.once('exit', (code) => reject(new Error(`the local provider exited with ${code}`)));
    });
    bundle = await bundleMain();
    dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-oidc-example-'));
    svc = startProcess(bundle.entry, {
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(controlPort),
      FLAGOPS_EVAL_PORT: String(evalPort),
      // As documented:
      FLAGOPS_OIDC_ISSUER: `http://127.0.0.1:${providerPort}`,
      FLAGOPS_OIDC_CLIENT_ID: 'flagops-dev',
      FLAGOPS_OIDC_CLIENT_SECRET: 'flagops-dev-secret',
      FLAGOPS_OIDC_ROLES: 'flag-admins=admin;shop-devs=editor',
    });
    await waitHealthy(`${controlUrl}/healthz`, svc.child);
  }, 60_000);

  afterAll(async () => {
    if (svc && svc.child.exitCode === null) {
      svc.child.kill('SIGTERM');
      await svc.exit;
    }
    provider?.kill('SIGTERM');
    await bundle?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('signs alice in as an admin, and refuses uma, whose group is mapped to nothing', async () => {
    const alice = await signInAtProvider(controlUrl, 'alice', 'alice');
    expect((await jarFetch(alice.jar, alice.callbackUrl)).status).toBe(303);
    const me = await jarFetch(alice.jar, `${controlUrl}/dashboard/api/session`);
    expect(await me.json()).toMatchObject({ user: { name: 'alice@example.com', org: 'default' }, signedInWith: 'oidc' });

    const uma = await signInAtProvider(controlUrl, 'uma', 'uma');
    expect((await jarFetch(uma.jar, uma.callbackUrl)).status).toBe(403);
    expect(svc.stderr.join('')).toContain('"msg":"single sign-on ready"');
  });
});

describe('the local provider script', () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['scripts/oidc-dev-provider.mjs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk) => (stdout += chunk));
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });

  it('prints its usage for --help and exits, starting nothing', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: node scripts/oidc-dev-provider.mjs [--port 4010] [--redirect-uri URL]');
    expect(help.stdout).not.toContain('issuer ');
  });

  it('refuses an option it does not know, or a port that is none, with exit 2', async () => {
    for (const args of [['--bogus'], ['--port', 'eighty']]) {
      const refused = await run(args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('oidc-dev-provider: ');
    }
  });
});
