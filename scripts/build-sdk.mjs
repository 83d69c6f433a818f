#!/usr/bin/env node
// Builds the browser bundle of the SDK: one ESM file with the evaluation core inside, no imports, no Node API.
//   node scripts/build-sdk.mjs                    → dist/browser/flagops-sdk.js (+ .map)
//   node scripts/build-sdk.mjs --outfile <path>   → somewhere else (tests, benchmarks)
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What must never appear in the bundle: it would fail to load in a browser. */
const NODE_ONLY = [/\bfrom\s*["']node:/, /\bimport\(\s*["']node:/, /\brequire\(/, /\bprocess\.\w/, /\bBuffer\./];

export async function buildSdkBundle({ outfile = path.join(root, 'dist/browser/flagops-sdk.js'), minify = true } = {}) {
  await build({
    entryPoints: [path.join(root, 'src/sdk/index.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // ES2020 syntax; fetch, AbortController, TextDecoder and ReadableStream readers: every browser since 2020.
    target: 'es2020',
    minify,
    sourcemap: true,
    legalComments: 'none',
    banner: { js: '// flagops SDK for browsers (docs/sdk.md); built by scripts/build-sdk.mjs' },
    logLevel: 'warning',
  });
  const code = await readFile(outfile, 'utf8');
  const found = NODE_ONLY.find((re) => re.test(code));
  if (found) throw new Error(`${outfile} uses something browsers lack (${found}); the SDK must stay platform-neutral`);
  return { outfile, bytes: Buffer.byteLength(code) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--outfile');
  const outfile = at === -1 ? undefined : path.resolve(process.argv[at + 1]);
  const { outfile: written, bytes } = await buildSdkBundle({ outfile });
  console.log(`wrote ${path.relative(process.cwd(), written)} (${(bytes / 1024).toFixed(1)} KiB)`);
}
