#!/usr/bin/env node
// Builds the dashboard page (docs/dashboard.md): the browser code bundled into one ESM file, the CSS, and
// index.html, into dist/dashboard-web/, which the control plane serves at / and /dashboard/assets/.
//   node scripts/build-dashboard.mjs                   → dist/dashboard-web/
//   node scripts/build-dashboard.mjs --outdir <dir>    → somewhere else
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const web = path.join(root, 'packages/dashboard/src');

/** The page must work without any network but the control plane's: no absolute URL may be loaded. */
const EXTERNAL = [/\bsrc=["']https?:/i, /\bhref=["']https?:/i, /url\(\s*["']?https?:/i, /@import\s+["']?(?:url\()?\s*["']?https?:/i];
/** Node-only code in the bundle would fail in the browser. */
const NODE_ONLY = [/\bfrom\s*["']node:/, /\bimport\(\s*["']node:/, /\brequire\(/];

export async function buildDashboard({ outdir = path.join(root, 'dist/dashboard-web'), minify = true } = {}) {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: { app: path.join(web, 'main.ts'), style: path.join(web, 'style.css') },
    outdir,
    entryNames: '[name]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // <dialog>, :has() and ES2020: every evergreen browser since 2023.
    target: 'es2020',
    minify,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await copyFile(path.join(web, 'index.html'), path.join(outdir, 'index.html'));
  const files = {
    js: await readFile(path.join(outdir, 'app.js'), 'utf8'),
    css: await readFile(path.join(outdir, 'style.css'), 'utf8'),
    html: await readFile(path.join(outdir, 'index.html'), 'utf8'),
  };
  for (const [name, text] of Object.entries(files)) {
    const external = name === 'js' ? null : EXTERNAL.find((re) => re.test(text));
    if (external) throw new Error(`the dashboard's ${name} loads something from another host (${external}); it must work offline`);
  }
  const nodeOnly = NODE_ONLY.find((re) => re.test(files.js));
  if (nodeOnly)
    throw new Error(`the dashboard bundle uses Node-only code (${nodeOnly}); packages/dashboard must not import server modules`);
  return { outdir, bytes: Buffer.byteLength(files.js) + Buffer.byteLength(files.css) + Buffer.byteLength(files.html) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--outdir');
  const outdir = at === -1 ? undefined : path.resolve(process.argv[at + 1]);
  const { outdir: written, bytes } = await buildDashboard({ outdir });
  console.log(`wrote ${path.relative(process.cwd(), written) || '.'} (${(bytes / 1024).toFixed(1)} KiB)`);
}
