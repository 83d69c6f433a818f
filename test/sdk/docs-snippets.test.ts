import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdkBundle } from '../../scripts/build-packages.mjs';
import { PACKAGE_SOURCES } from '../../scripts/package-sources.mjs';
import { type SdkHarness, startSdkHarness } from './sdk-harness.js';
import { tourFlags } from './tour-data.js';

/**
 * Every ```js block of docs/ marked `<!-- snippet: NAME -->` runs against a started service, and when the
 * docs show its output (a ```text block marked `<!-- output: NAME -->`) it must print exactly that. Snippets
 * named browser… run the way a page would: the browser bundle, in a context with only browser APIs. The docs
 * use `http://127.0.0.1:4001` and `YOUR_SDK_KEY` (or FLAGOPS_EVAL_URL and FLAGOPS_SDK_KEY in Node), which
 * are replaced by the test service's. The service holds what the README's tour creates (tour-data.ts), so
 * the docs run on the data their readers have.
 */
interface Snippet {
  doc: string;
  name: string;
  code: string;
  output?: string;
}

const root = fileURLToPath(new URL('../../', import.meta.url));
const docsDir = path.join(root, 'docs');

function snippets(): Snippet[] {
  const found: Snippet[] = [];
  for (const doc of readdirSync(docsDir).filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(path.join(docsDir, doc), 'utf8');
    const outputs = new Map<string, string>();
    for (const m of text.matchAll(/<!-- output: ([\w-]+) -->\s*```text\n([\s\S]*?)```/g)) outputs.set(m[1], m[2]);
    for (const m of text.matchAll(/<!-- snippet: ([\w-]+) -->\s*```(?:js|ts)\n([\s\S]*?)```/g)) {
      found.push({ doc, name: m[1], code: m[2], output: outputs.get(m[1]) });
    }
  }
  return found;
}

/** What the docs import: the packages (`@flagops/...`) and the service's re-exports of them (`flagops/...`), from their sources. */
const flagopsPackage: Plugin = {
  name: 'flagops-package',
  setup(b) {
    b.onResolve({ filter: /^@?flagops\// }, (args) => {
      const specifier = args.path.startsWith('flagops/') ? `@${args.path}` : args.path;
      const file = Object.hasOwn(PACKAGE_SOURCES, specifier) ? PACKAGE_SOURCES[specifier] : undefined;
      return file ? { path: file } : { errors: [{ text: `no package export ${args.path}` }] };
    });
  },
};

function run(args: string[], env: Record<string, string>, expectedLines: number, timeoutMs = 20_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => {
      stdout += d;
      // A page never closes its client: once it has printed what the docs show, the test ends it.
      if (args.includes('--experimental-vm-modules') && stdout.split('\n').length > expectedLines) child.kill();
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the code in the docs (docs/*.md, marked snippets)', () => {
  const all = snippets();
  let h: SdkHarness;
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    h = await startSdkHarness(tourFlags());
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-snippets-'));
    bundle = (await buildSdkBundle({ outfile: path.join(dir, 'flagops-sdk.js') })).outfile;
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await h?.stop();
  });

  it('finds the getting-started snippets for Node, the browser and OpenFeature, each with its output', () => {
    const names = all.map((s) => s.name);
    for (const name of ['node', 'node-remote', 'browser', 'openfeature-node', 'openfeature-web', 'ofrep']) expect(names).toContain(name);
    for (const s of all) expect(s.output, `${s.doc}: ${s.name}`).toBeDefined();
  });

  for (const snippet of all) {
    it(`runs ${snippet.name} from docs/${snippet.doc} and prints what the docs say`, async () => {
      const code = snippet.code.replaceAll('http://127.0.0.1:4001', h.service.evalUrl).replaceAll('YOUR_SDK_KEY', h.key);
      const env = { FLAGOPS_EVAL_URL: h.service.evalUrl, FLAGOPS_SDK_KEY: h.key };
      const expected = snippet.output ?? '';
      const lines = expected.split('\n').length - 1;
      let result: Awaited<ReturnType<typeof run>>;
      if (snippet.name.startsWith('browser')) {
        const app = path.join(dir, `${snippet.name}.js`);
        await writeFile(app, code);
        result = await run(
          [
            '--experimental-vm-modules',
            '--no-warnings',
            fileURLToPath(new URL('./fixtures/run-bundle-in-vm.mjs', import.meta.url)),
            bundle,
            app,
          ],
          env,
          lines,
        );
      } else {
        const source = path.join(dir, `${snippet.name}.src.mjs`);
        const outfile = path.join(dir, `${snippet.name}.mjs`);
        await writeFile(source, code);
        await build({
          entryPoints: [source],
          outfile,
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          plugins: [flagopsPackage],
          nodePaths: [path.join(root, 'node_modules')],
          logLevel: 'silent',
        });
        result = await run([outfile], env, lines);
        expect(result.code, result.stderr).toBe(0); // a script ends by itself once it has closed its client
      }
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe(expected);
    });
  }
});
