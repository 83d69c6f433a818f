#!/usr/bin/env node
// Builds the JavaScript of the @flagops packages (their types come from `tsc -b`, which runs first) and the
// browser bundle of @flagops/sdk. Each package's entry points become minified ES modules, one file each, with
// the code they share in one chunk; other packages stay imports. Small installs are a goal of the SDK: an
// application installs only @flagops/sdk and @flagops/core.
//   node scripts/build-packages.mjs                   → packages/*/dist/*.js, packages/sdk/dist/browser/flagops-sdk.js
//   node scripts/build-packages.mjs --sdk-bundle <path> → only the browser bundle, written to <path> (tests, benchmarks)
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { packageSourcesPlugin } from './package-sources.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each package's entry points, by source file; the rest of its sources are reached from them. */
const PACKAGES = {
  core: ['index.ts'],
  sdk: ['index.ts', 'sse.ts'],
  openfeature: ['server.ts', 'web.ts'],
};

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
  const { outputFiles } = await build({
    entryPoints: PACKAGES[name].map((file) => path.join(dir, 'src', file)),
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    packages: 'external',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  for (const { path: file, text } of outputFiles) assertBrowserSafe(file, text);
  // Chunk names change with their content: remove the ones this build did not write.
  const chunks = path.join(outdir, 'chunks');
  const keep = new Set(outputFiles.map((f) => f.path));
  for (const old of await readdir(chunks).catch(() => [])) if (!keep.has(path.join(chunks, old))) await rm(path.join(chunks, old), { force: true });
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
    for (const name of Object.keys(PACKAGES)) console.log(`built ${path.relative(process.cwd(), await buildPackage(name))}`);
  }
  const { outfile, bytes } = await buildSdkBundle({ outfile: at === -1 ? undefined : path.resolve(process.argv[at + 1]) });
  console.log(`wrote ${path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(1)} KiB)`);
}
