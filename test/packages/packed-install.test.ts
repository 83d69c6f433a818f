import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_MISSING, launchChromium, loopbackContext } from '../helpers/browser.js';
import { type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { filesUnder, type PackedTarball, packAll, ROOT, run, writeApp } from './packed-app.js';

/**
 * The packages as users get them: `npm pack` of @flagops/core, @flagops/sdk, @flagops/openfeature
 * and the service, installed offline into empty applications, then run: every export in Node against a real
 * flagops service, the bins, the types with tsc, and the SDK's browser bundle, loaded from the installed
 * package, in Chromium.
 */
const OPENFEATURE = ['@openfeature/core', '@openfeature/server-sdk', '@openfeature/web-sdk'];
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const CONTEXT = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.4.0' } };

describe('the packed packages, installed in an empty application', () => {
  let dir: string;
  let packed: PackedTarball[];
  let sdkApp: string;
  let app: string;
  let h: SdkHarness;
  let serverResult: Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-packed-'));
    // What the tarballs hold is the build: bring it up to date with the sources first.
    await run(process.execPath, [TSC, '-b', 'tsconfig.build.json'], ROOT);
    await run(process.execPath, ['scripts/build-packages.mjs'], ROOT);
    packed = await packAll(path.join(dir, 'packs'));
    const tarballs = new Map(packed.map((p) => [p.name, path.join(dir, 'packs', p.filename)]));

    sdkApp = path.join(dir, 'sdk-app');
    await writeApp(sdkApp, new Map([...tarballs].filter(([name]) => name === '@flagops/sdk' || name === '@flagops/core')), []);
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], sdkApp);

    app = path.join(dir, 'app');
    await writeApp(app, tarballs, OPENFEATURE);
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], app);

    h = await startSdkHarness();
    const res = await fetch(`${h.service.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'new-checkout', context: CONTEXT }),
    });
    serverResult = ((await res.json()) as Record<string, Record<string, unknown>>)['new-checkout'];
  }, 240_000);
  afterAll(async () => {
    await h?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('packs four tarballs at one version, each with its README and nothing of the sources or the build state', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(['@flagops/core', '@flagops/openfeature', '@flagops/sdk', 'flagops']);
    expect(new Set(packed.map((p) => p.version)).size).toBe(1);
    for (const p of packed) {
      const files = p.files.map((f) => f.path);
      expect(files, p.name).toContain('README.md');
      expect(
        files.filter((f) => /(^|\/)src\/|\.tsbuildinfo$|\.test\./.test(f)),
        p.name,
      ).toEqual([]);
    }
  });

  it('@flagops/sdk installs with no other package than @flagops/core, in under 112 kB', async () => {
    const files = (await filesUnder(path.join(sdkApp, 'node_modules'))).filter((f) => !f.file.startsWith('.'));
    const installed = files.map((f) => f.file.split('/').slice(0, 2).join('/'));
    expect([...new Set(installed)].sort()).toEqual(['@flagops/core', '@flagops/sdk']);
    // What an application downloads and keeps for the SDK (scripts/bench/package-size.mjs itemises it).
    expect(files.reduce((sum, f) => sum + f.bytes, 0)).toBeLessThan(112_000);
    const manifest = JSON.parse(await readFile(path.join(sdkApp, 'node_modules/@flagops/sdk/package.json'), 'utf8'));
    expect(manifest.dependencies).toEqual({ '@flagops/core': manifest.version });
    expect(manifest.peerDependencies).toBeUndefined();
  });

  it('runs every export in Node against a flagops service, with the result the server gives', async () => {
    await copyFile(path.join(ROOT, 'test/packages/fixtures/node-app.mjs'), path.join(app, 'node-app.mjs'));
    const out = JSON.parse(
      await run(process.execPath, ['node-app.mjs'], app, { FLAGOPS_EVAL_URL: h.service.evalUrl, FLAGOPS_SDK_KEY: h.key }),
    );
    expect(serverResult).toMatchObject({ value: true, reason: 'rule_match', ruleId: 'eu-new-app' });
    expect(out.core).toEqual(serverResult);
    for (const name of ['sdkLocal', 'sdkRemote', 'sdkBrowserModule', 'serviceSdk', 'serviceSdkBrowser']) {
      expect(out[`${name}Status`], name).toBe('ready');
      expect(out[name], name).toEqual(serverResult);
    }
    for (const name of ['openfeature', 'openfeatureWeb']) {
      expect(out[name], name).toMatchObject({
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'on',
        flagMetadata: { ruleId: 'eu-new-app' },
      });
    }
    expect(out.exports).toEqual({
      sse: 'function',
      serviceEvaluation: true,
      serviceOpenfeature: 'function',
      serviceOpenfeatureWeb: 'function',
    });
    // The service package has no main export: importing it starts nothing.
    expect(out.serviceMain).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('installs the service commands flagops and flagops-mcp', async () => {
    const bin = path.join(app, 'node_modules/.bin');
    expect((await run(path.join(bin, 'flagops'), ['--version'], app)).trim()).toBe(packed[0].version);
    expect(await run(path.join(bin, 'flagops'), ['validate', path.join(ROOT, 'flags')], app)).toMatch(/valid \(1 valid project/);
    expect(await run(path.join(bin, 'flagops-mcp'), ['--help'], app)).toMatch(/^flagops-mcp: /);
  });

  it('gives every export its types (tsc, strict, declaration files checked too)', async () => {
    await copyFile(path.join(ROOT, 'test/packages/fixtures/types-check.ts'), path.join(app, 'check.ts'));
    const types = ['--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types')];
    await run(
      process.execPath,
      [TSC, '--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', ...types, 'check.ts'],
      app,
    );
  });

  it.skipIf(CHROMIUM_MISSING !== null)(
    'loads the browser bundle from the installed package in Chromium, evaluating as the server does',
    async () => {
      const bundle = await readFile(path.join(app, 'node_modules/@flagops/sdk/dist/browser/flagops-sdk.js'), 'utf8');
      const page: Server = createServer((req, res) => {
        const js = req.url === '/flagops-sdk.js';
        res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html' });
        res.end(js ? bundle : '<!doctype html><title>app</title>');
      });
      await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
      const browser = await launchChromium();
      const leaks: string[] = [];
      try {
        const tab = await (await loopbackContext(browser, leaks)).newPage();
        await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
        // Source text, not a function: the test runner would rewrite a dynamic import() inside a function.
        const seen = await tab.evaluate(`(async () => {
        const { createClient } = await import('/flagops-sdk.js');
        const client = createClient({ evalUrl: ${JSON.stringify(h.service.evalUrl)}, sdkKey: ${JSON.stringify(h.key)}, sendCounts: false });
        const status = await client.ready();
        const details = client.details('new-checkout', false, ${JSON.stringify(CONTEXT)});
        await client.close();
        return { status, details };
      })()`);
        expect(seen).toEqual({ status: 'ready', details: serverResult });
        expect(leaks).toEqual([]);
      } finally {
        await browser.close();
        await new Promise((resolve) => page.close(resolve));
      }
    },
  );
});
