/**
 * The packages are not on the npm registry, so the docs say how an application outside the checkout gets them:
 * `npm pack` in the checkout, `npm install` of the tarballs by path in the application. Every such block of the
 * README ("Outside this checkout"), docs/sdk.md and the getting-started guides runs here word for word, offline,
 * with HOME holding `~/flagops` (the checkout's package manifests and built packages) and an empty `~/my-app`.
 * Then the README tour's application runs in `~/my-app`, against a service holding the tour's data.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { tourFlags } from '../sdk/tour-data.js';
import { runBlock, shellBlocks } from './doc-blocks.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = [
  'README.md',
  'docs/sdk.md',
  'docs/getting-started-node.md',
  'docs/getting-started-browser.md',
  'docs/getting-started-openfeature.md',
];

describe('the packages outside the checkout, installed as the docs say', () => {
  let base: string;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'flagops-outside-'));
    home = path.join(base, 'home');
    // What `npm pack -w` reads of the checkout: the workspaces' manifest and the packages as `npm ci` built them.
    await mkdir(path.join(home, 'flagops'), { recursive: true });
    await cp(path.join(ROOT, 'package.json'), path.join(home, 'flagops/package.json'));
    await cp(path.join(ROOT, 'packages'), path.join(home, 'flagops/packages'), {
      recursive: true,
      filter: (source) => !source.split(path.sep).includes('node_modules'),
    });
    env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /** Each doc's blocks that pack and install the flagops packages. */
  async function installBlocks(): Promise<{ doc: string; block: string }[]> {
    const found: { doc: string; block: string }[] = [];
    for (const doc of DOCS) {
      const text = await readFile(path.join(ROOT, doc), 'utf8');
      const blocks = doc === 'README.md' ? shellBlocks(text, 'Outside this checkout') : shellBlocks(text);
      for (const block of blocks.filter((b) => b.includes('npm pack'))) found.push({ doc, block });
    }
    return found;
  }

  /** A fresh `~/my-app` and no tarballs left from the block before. */
  async function freshStart(): Promise<string> {
    const app = path.join(home, 'my-app');
    await rm(app, { recursive: true, force: true });
    await mkdir(app);
    for (const file of await readdir(path.join(home, 'flagops'))) {
      if (file.endsWith('.tgz')) await rm(path.join(home, 'flagops', file));
    }
    return app;
  }

  it('installs every documented set of tarballs into an application, which imports the SDK', async () => {
    const blocks = await installBlocks();
    expect(blocks.map((b) => b.doc)).toEqual(DOCS);
    for (const { doc, block } of blocks) {
      const app = await freshStart();
      const out = await runBlock(`set -euo pipefail\n${block}`, home, env);
      expect(out.code, `${doc}:\n${out.out}`).toBe(0);
      const named = [...block.matchAll(/~\/flagops\/flagops-([a-z]+)-[\d.]+\.tgz/g)].map((m) => `@flagops/${m[1]}`);
      expect(named, doc).toEqual(expect.arrayContaining(['@flagops/core', '@flagops/sdk']));
      const manifest = JSON.parse(await readFile(path.join(app, 'package.json'), 'utf8'));
      expect(Object.keys(manifest.dependencies).sort(), doc).toEqual([...new Set(named)].sort());
      const imported = await runBlock(
        `node --input-type=module -e 'const { createClient } = await import("@flagops/sdk"); console.log(typeof createClient)'`,
        app,
        env,
      );
      expect(imported.out.trim(), `${doc}: ${imported.out}`).toBe('function');
    }
  }, 180_000);

  describe('the README tour’s application, in ~/my-app', () => {
    let h: SdkHarness;
    let app: ChildProcess | undefined;
    beforeAll(async () => {
      h = await startSdkHarness(tourFlags());
    });
    afterAll(async () => {
      app?.kill('SIGTERM');
      await h?.stop();
    });

    it('prints the flag as the tour shows it', async () => {
      const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
      const [install] = shellBlocks(readme, 'Outside this checkout');
      const myApp = await freshStart();
      expect((await runBlock(`set -euo pipefail\n${install}`, home, env)).code).toBe(0);
      const application = shellBlocks(readme, 'A five-minute tour')[2].replaceAll('http://127.0.0.1:4001', h.service.evalUrl);
      expect(application).toContain('from "@flagops/sdk"');
      const child = spawn('bash', ['-c', application], { cwd: myApp, env: { ...env, SDK: h.key }, stdio: ['ignore', 'pipe', 'pipe'] });
      app = child;
      let printed = '';
      child.stdout.on('data', (chunk) => (printed += chunk));
      child.stderr.on('data', (chunk) => (printed += chunk));
      const started = Date.now();
      while (!printed.includes('\n')) {
        if (child.exitCode !== null || Date.now() - started > 20_000) throw new Error(`the application printed: ${printed}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(printed).toMatch(/^\S+Z \{ value: true, reason: 'rule_match', variation: 'on', ruleId: 'beta' \}\n/);
    }, 60_000);
  });
});
