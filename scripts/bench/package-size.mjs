#!/usr/bin/env node
// What an application gets with `npm install @flagops/sdk`: the packages installed (the SDK and @flagops/core,
// nothing else) and their installed size, the sum of the sizes of their files in node_modules, file by file;
// then the SDK's module (which is also its browser bundle) raw and gzipped. Packs the built packages (npm pack)
// and installs the tarballs offline into an empty application in a temp dir.
//   npm run build && node scripts/bench/package-size.mjs     (or npm run bench -- package-size)
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = await mkdtemp(path.join(tmpdir(), 'flagops-package-size-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

try {
  const packs = path.join(dir, 'packs');
  await mkdir(packs); // npm pack writes into --pack-destination but does not create it
  const packed = JSON.parse(
    npm(['pack', '--json', '--ignore-scripts', '-w', '@flagops/core', '-w', '@flagops/sdk', '--pack-destination', packs], root),
  );
  const app = path.join(dir, 'app');
  const dependencies = Object.fromEntries(packed.map((p) => [p.name, `file:${path.join(packs, p.filename)}`]));
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, dependencies }));
  npm(['install', '--offline', '--no-audit', '--no-fund'], app);

  const installed = [];
  for (const entry of await readdir(path.join(app, 'node_modules'), { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? (await readdir(path.join(app, 'node_modules', entry.name))).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    installed.push(...names);
  }
  console.log(`npm install @flagops/sdk: ${installed.length} packages (${installed.sort().join(', ')})`);
  console.log('\n| file | bytes |\n|---|---:|');
  let total = 0;
  const byKind = { code: 0, types: 0, other: 0 };
  for (const name of installed) {
    const base = path.join(app, 'node_modules', name);
    for (const entry of await readdir(base, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const { size } = await stat(file);
      const rel = `${name}/${path.relative(base, file)}`;
      total += size;
      byKind[rel.endsWith('.d.ts') ? 'types' : rel.endsWith('.js') ? 'code' : 'other'] += size;
      console.log(`| ${rel} | ${size} |`);
    }
  }
  const kb = (n) => `${(n / 1000).toFixed(1)} kB`;
  console.log(
    `\ninstalled: ${kb(total)} (modules ${kb(byKind.code)}, declarations ${kb(byKind.types)}, package.json and README ${kb(byKind.other)})`,
  );
  for (const p of packed) console.log(`tarball ${p.filename}: ${kb(p.size)}`);
  const bundle = await readFile(path.join(app, 'node_modules/@flagops/sdk/dist/browser/flagops-sdk.js'));
  console.log(`the SDK's module, also its browser bundle: ${kb(bundle.length)}, ${kb(gzipSync(bundle).length)} gzipped`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
