import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdkBundle } from '../../scripts/build-packages.mjs';
import { killRequest, type SdkHarness, startSdkHarness } from './sdk-harness.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/**
 * The browser bundle, tested without a browser: it is loaded as an ES module into an empty V8 context given
 * only fetch, timers, AbortController and TextDecoder. A test in a real browser waits for chromium
 * (the dashboard's browser tests).
 */
describe('the browser bundle (scripts/build-packages.mjs)', () => {
  let h: SdkHarness;
  let dir: string | undefined;
  let bundle: string;

  beforeAll(async () => {
    h = await startSdkHarness();
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-browser-'));
    bundle = (await buildSdkBundle({ outfile: path.join(dir, 'flagops-sdk.js') })).outfile;
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await h?.stop();
  });

  it('is one ES module that imports nothing and names no Node API', async () => {
    const code = await readFile(bundle, 'utf8');
    expect(code).not.toMatch(/\bimport\s*[^(]*?\bfrom\s*["']|\bimport\(|\brequire\(|node:|\bprocess\.|\bBuffer\b/);
    expect(code).toMatch(/export\s*\{[^}]*\bcreateClient\b/);
  });

  it('loads, evaluates and follows a kill over the stream in a context with only browser APIs', async () => {
    const child = spawn(
      process.execPath,
      ['--experimental-vm-modules', '--no-warnings', fixture('run-bundle-in-vm.mjs'), bundle, fixture('bundle-app.js')],
      {
        env: { ...process.env, FLAGOPS_EVAL_URL: h.service.evalUrl, FLAGOPS_SDK_KEY: h.key },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const said: unknown[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      const message = JSON.parse(line);
      said.push(message);
      if (message.waiting) {
        await h.kills.kill(killRequest(h, 'new-checkout'));
        child.stdin.write('go\n');
      }
    }
    expect(await exited, stderr).toBe(0);
    expect(said).toEqual([
      { globals: [] },
      { status: 'ready', checkout: { value: true, reason: 'rule_match', variation: 'on', ruleId: 'eu-new-app' }, banner: 'Spring sale' },
      { waiting: true },
      { keys: ['new-checkout'], checkout: { value: false, reason: 'killed', variation: 'off' } },
    ]);
  });
});
