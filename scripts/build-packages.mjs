#!/usr/bin/env node
// Builds the JavaScript of the @flagops packages (their types come from `tsc -b`, which runs first) and the
// browser bundle of @flagops/sdk. Each source file becomes one minified ES module beside its declarations, so a
// package's dist/ mirrors its src/: not bundled, since one module per file is also what keeps evaluation as fast
// as the service's own build of it (a bundled core measured 4 % slower in the SDK benchmark). Small installs
// are a goal of the SDK: an application installs only @flagops/sdk and @flagops/core.
//   node scripts/build-packages.mjs                     → packages/*/dist/*.js, packages/sdk/dist/browser/flagops-sdk.js
//   node scripts/build-packages.mjs --sdk-bundle <path> → only the browser bundle, written to <path> (tests, benchmarks)
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { packageSourcesPlugin } from './package-sources.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const PACKAGES = ['core', 'sdk', 'openfeature'];

/** What must never appear in browser code: it would fail to load in a browser. */
const NODE_ONLY = [/\bfrom\s*["']node:/, /\bimport\(\s*["']node:/, /\brequire\(/, /\bprocess\.\w/, /\bBuffer\./];

function assertBrowserSafe(file, code) {
  const found = NODE_ONLY.find((re) => re.test(code));
  if (found) throw new Error(`${file} uses something browsers lack (${found}); the SDK must stay platform-neutral`);
}

/**
 * Writes what esbuild built, each file replaced in one step and only when it changed: a service or a test
 * running from these files meanwhile never reads half of one.
 */
async function writeOutputs(outputFiles) {
  for (const { path: file, contents } of outputFiles) {
    const before = await readFile(file).catch(() => null);
    if (before !== null && Buffer.compare(before, contents) === 0) continue;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(`${file}.tmp`, contents);
    await rename(`${file}.tmp`, file);
  }
}

/** One package's modules: platform-neutral ES2022 for Node 20 and for browsers through the application's bundler. */
export async function buildPackage(name) {
  const dir = path.join(root, 'packages', name);
  const outdir = path.join(dir, 'dist');
  const sources = (await readdir(path.join(dir, 'src'))).filter((file) => file.endsWith('.ts'));
  const { outputFiles } = await build({
    entryPoints: sources.map((file) => path.join(dir, 'src', file)),
    outdir,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  for (const { path: file, text } of outputFiles) assertBrowserSafe(file, text);
  await writeOutputs(outputFiles);
  return outdir;
}

/** The SDK as one ES module for a `<script type="module">`: the evaluation core inside, no imports, no Node API. */
export async function buildSdkBundle({ outfile = path.join(root, 'packages/sdk/dist/browser/flagops-sdk.js'), minify = true } = {}) {
  const { outputFiles } = await build({
    entryPoints: [path.join(root, 'packages/sdk/src/index.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // ES2020 syntax; fetch, AbortController, TextDecoder and ReadableStream readers: every browser since 2020.
    target: 'es2020',
    minify,
    legalComments: 'none',
    banner: { js: '// @flagops/sdk for browsers: createClient and the rest of the SDK in one ES module' },
    plugins: [packageSourcesPlugin],
    write: false,
    logLevel: 'warning',
  });
  const [bundle] = outputFiles;
  assertBrowserSafe(outfile, bundle.text);
  await writeOutputs(outputFiles);
  return { outfile, bytes: bundle.contents.byteLength };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--sdk-bundle');
  if (at === -1) {
    for (const name of PACKAGES) console.log(`built ${path.relative(process.cwd(), await buildPackage(name))}`);
  }
  const { outfile, bytes } = await buildSdkBundle({ outfile: at === -1 ? undefined : path.resolve(process.argv[at + 1]) });
  console.log(`wrote ${path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(1)} KiB)`);
}
