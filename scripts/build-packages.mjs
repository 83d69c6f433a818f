#!/usr/bin/env node
// Builds what the @flagops packages ship: for each entry point, one minified ES module (esbuild) and one
// declaration file (the declarations `tsc -b` wrote to dist/.types, rolled up with rollup-plugin-dts, doc
// comments kept). Small installs are a goal of the SDK (an application installs only @flagops/sdk and
// @flagops/core, measured by scripts/bench/package-size.mjs), so nothing ships twice: the SDK's module is the
// whole SDK with the evaluation core inside, importing nothing, and that same file is its browser bundle.
//   node scripts/build-packages.mjs                     → packages/*/dist (after tsc -b, which npm run build runs first)
//   node scripts/build-packages.mjs --sdk-bundle <path> → only the SDK's module, written to <path> (tests, benchmarks)
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { packageSourcesPlugin } from './package-sources.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every entry point, as the packages' package.json `exports` name them. `selfContained`: the module bundles the
 * other @flagops packages it uses instead of importing them, so that a page loads it without a bundler.
 */
const ENTRIES = [
  { pkg: 'core', source: 'index.ts', module: 'index.js', types: 'index.d.ts' },
  { pkg: 'sdk', source: 'index.ts', module: 'browser/flagops-sdk.js', types: 'index.d.ts', selfContained: true },
  { pkg: 'sdk', source: 'sse.ts', module: 'sse.js', types: 'sse.d.ts' },
  { pkg: 'openfeature', source: 'server.ts', module: 'server.js', types: 'server.d.ts' },
  { pkg: 'openfeature', source: 'web.ts', module: 'web.js', types: 'web.d.ts' },
];
const SDK = ENTRIES[1];

/** What must never appear in a package's code: it would fail to load in a browser. */
const NODE_ONLY = [/\bfrom\s*["']node:/, /\bimport\(\s*["']node:/, /\brequire\(/, /\bprocess\.\w/, /\bBuffer\./];

function assertBrowserSafe(file, code) {
  const found = NODE_ONLY.find((re) => re.test(code));
  if (found) throw new Error(`${file} uses something browsers lack (${found}); the packages must stay platform-neutral`);
}

/**
 * Writes a file in one step and only when it changed: a service or a test running from the build meanwhile
 * never reads half of one.
 */
async function writeOutput(file, contents) {
  const before = await readFile(file).catch(() => null);
  if (before !== null && Buffer.compare(before, Buffer.from(contents)) === 0) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, contents);
  await rename(`${file}.tmp`, file);
}

/**
 * One entry point as one ES module: platform-neutral ES2022 (Node 20; browsers since 2022, which the SDK's use
 * of Object.hasOwn needs anyway), minified, no source map. Resolves with the module's text and the names it
 * exports.
 */
async function bundleEntry(entry, { outfile, minify = true }) {
  const { outputFiles, metafile } = await build({
    entryPoints: [path.join(root, 'packages', entry.pkg, 'src', entry.source)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    minify,
    legalComments: 'none',
    ...(entry.selfContained
      ? {
          plugins: [packageSourcesPlugin],
          banner: { js: '// @flagops/sdk for Node 20 and browsers: the whole SDK, with @flagops/core, in one ES module' },
        }
      : { external: ['@flagops/*', '@openfeature/*'] }),
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const [output] = outputFiles;
  assertBrowserSafe(outfile, output.text);
  return { contents: output.contents, exports: Object.values(metafile.outputs)[0].exports };
}

/**
 * The entry point's declarations in one file. rollup-plugin-dts keeps the doc comments, follows only what the
 * entry exports, and renames what would clash; afterwards, names the module does not export at run time (types,
 * and classes exported as types only) are exported with `export type`, as the sources say, and the indentation
 * is halved to two spaces.
 */
async function rollUpDeclarations(entry, runtimeExports) {
  const types = path.join(root, 'packages', entry.pkg, 'dist/.types');
  const bundle = await rollup({
    input: path.join(types, entry.source.replace(/\.ts$/, '.d.ts')),
    plugins: [dts()],
    external: [/^@flagops\//, /^@openfeature\//],
    onwarn: (warning) => {
      throw new Error(`rolling up the declarations of ${entry.pkg}/${entry.source}: ${warning.message}`);
    },
  });
  const { output } = await bundle.generate({ format: 'es' });
  await bundle.close();
  const values = new Set(runtimeExports);
  /** `A as B` exports B. */
  const exported = (name) => name.split(' as ').at(-1);
  const lines = output[0].code.split('\n').flatMap((line) => {
    const list = /^export \{ (.*) \}( from '[^']+')?;$/.exec(line);
    if (!list) return [line.replace(/^((?: {4})+)/, (indent) => ' '.repeat(indent.length / 2))];
    const names = list[1].split(', ');
    const runtime = names.filter((name) => values.has(exported(name)));
    const typeOnly = names.filter((name) => !values.has(exported(name)));
    const from = list[2] ?? '';
    return [
      ...(runtime.length ? [`export { ${runtime.join(', ')} }${from};`] : []),
      ...(typeOnly.length ? [`export type { ${typeOnly.join(', ')} }${from};`] : []),
    ];
  });
  const declared = lines.join('\n');
  const declaredNames = [...declared.matchAll(/^export (?:type )?\{ (.*) \}/gm)].flatMap((m) => m[1].split(', ').map(exported));
  const undeclared = runtimeExports.filter((name) => !declaredNames.includes(name));
  if (undeclared.length) throw new Error(`${entry.pkg}/${entry.types} declares no type for ${undeclared.join(', ')}`);
  return declared;
}

/** Removes what an earlier build left in `dist` that this one did not write (the tsc output in dist/.types stays). */
async function removeStale(dist, written) {
  for (const entry of await readdir(dist, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dist, file);
    if (!entry.isFile() || rel.startsWith('.types')) continue;
    if (!written.has(file)) await rm(file);
  }
}

/** One package's dist: a module and a declaration file per entry point, nothing else. */
export async function buildPackage(pkg) {
  const dist = path.join(root, 'packages', pkg, 'dist');
  const written = new Set();
  for (const entry of ENTRIES.filter((e) => e.pkg === pkg)) {
    const moduleFile = path.join(dist, entry.module);
    const { contents, exports } = await bundleEntry(entry, { outfile: moduleFile });
    const typesFile = path.join(dist, entry.types);
    await writeOutput(moduleFile, contents);
    await writeOutput(typesFile, await rollUpDeclarations(entry, exports));
    written.add(moduleFile).add(typesFile);
  }
  await removeStale(dist, written);
  return dist;
}

/** The SDK's module (which is also its browser bundle) written to `outfile`, for tests and benchmarks. */
export async function buildSdkBundle({ outfile = path.join(root, 'packages/sdk/dist', SDK.module), minify = true } = {}) {
  const { contents } = await bundleEntry(SDK, { outfile, minify });
  await writeOutput(outfile, contents);
  return { outfile, bytes: contents.byteLength };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--sdk-bundle');
  if (at === -1) {
    for (const pkg of new Set(ENTRIES.map((e) => e.pkg))) console.log(`built ${path.relative(process.cwd(), await buildPackage(pkg))}`);
  } else {
    const { outfile, bytes } = await buildSdkBundle({ outfile: path.resolve(process.argv[at + 1]) });
    console.log(`wrote ${path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(1)} KiB)`);
  }
}
