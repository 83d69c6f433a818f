/**
 * An empty application with the packed flagops packages installed in it, offline, the way a user's npm would
 * install them from a registry: from the tarballs `npm pack` wrote, and every other package from npm's cache
 * (which `npm ci` filled).
 *
 * Offline, npm can install a package from its cache only when a lockfile names the exact version: the cache
 * holds the tarballs `npm ci` fetched, not the registry's package documents a version range is resolved
 * with. So the application gets a lockfile made from this repository's: the packed tarballs, and the
 * service's runtime dependencies and the OpenFeature SDKs as this repository locks them.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What `npm pack --json` reports of each tarball. */
export interface PackedTarball {
  name: string;
  version: string;
  filename: string;
  files: { path: string }[];
}

interface LockEntry {
  version?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/**
 * Runs npm (or another command) in `cwd` and resolves with its stdout; a failure rejects with its output.
 * Asynchronous, so that a service running in the test's own process keeps answering meanwhile.
 */
export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed (${err.message}):\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** npm pack of the three packages and the service into `dir`, without running their scripts (build first). */
export async function packAll(dir: string): Promise<PackedTarball[]> {
  await mkdir(dir, { recursive: true });
  const out = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--workspaces', '--include-workspace-root', '--pack-destination', dir],
    ROOT,
  );
  return JSON.parse(out) as PackedTarball[];
}

/** Where node would find package `name` from the one at lockfile path `from` ('' is the project). */
function locate(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i === -1 ? '' : dir.slice(0, i);
  }
}

const MANIFEST_FIELDS = [
  'version',
  'license',
  'dependencies',
  'bundleDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'engines',
  'bin',
];

async function manifestFields(dir: string): Promise<Record<string, unknown>> {
  const manifest = JSON.parse(await readFile(path.join(ROOT, dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  return Object.fromEntries(MANIFEST_FIELDS.filter((field) => manifest[field] !== undefined).map((field) => [field, manifest[field]]));
}

/**
 * Writes `app`'s package.json and package-lock.json: the tarballs of `packed` (named by package) and the
 * packages in `fromRegistry` at this repository's versions, with everything they need at run time.
 */
export async function writeApp(app: string, packed: Map<string, string>, fromRegistry: string[]): Promise<void> {
  await mkdir(app, { recursive: true });
  const rootLock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const rootPackages = rootLock.packages;
  const dependencies: Record<string, string> = {};
  for (const [name, tarball] of packed) dependencies[name] = `file:${tarball}`;
  for (const name of fromRegistry) dependencies[name] = rootPackages[`node_modules/${name}`].version!;
  const packages: Record<string, unknown> = { '': { name: 'app', dependencies } };

  const visit = (from: string, name: string) => {
    const at = locate(rootPackages, from, name);
    if (at === undefined || packages[at] !== undefined || rootPackages[at].link) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = rootPackages[at];
    packages[at] = entry;
    for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) visit(at, dep);
    for (const dep of Object.keys(entry.peerDependencies ?? {})) if (!entry.peerDependenciesMeta?.[dep]?.optional) visit(at, dep);
  };
  for (const name of fromRegistry) visit('', name);

  const workspaces = { '@flagops/core': 'packages/core', '@flagops/sdk': 'packages/sdk', '@flagops/openfeature': 'packages/openfeature' };
  for (const [name, dir] of Object.entries(workspaces)) {
    if (packed.has(name)) packages[`node_modules/${name}`] = { ...(await manifestFields(dir)), resolved: `file:${packed.get(name)}` };
  }
  const service = packed.get('flagops');
  if (service !== undefined) {
    const fields = await manifestFields('.');
    packages['node_modules/flagops'] = { ...fields, resolved: `file:${service}` };
    for (const [name, dir] of Object.entries(workspaces))
      packages[`node_modules/flagops/node_modules/${name}`] = { ...(await manifestFields(dir)), inBundle: true };
    for (const name of Object.keys(fields.dependencies as Record<string, string>)) if (!name.startsWith('@flagops/')) visit('', name);
  }

  await writeFile(
    path.join(app, 'package.json'),
    `${JSON.stringify({ name: 'app', private: true, type: 'module', dependencies }, null, 2)}\n`,
  );
  await writeFile(
    path.join(app, 'package-lock.json'),
    `${JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

/** Every file under `dir` with its size in bytes. */
export async function filesUnder(dir: string): Promise<{ file: string; bytes: number }[]> {
  const out: { file: string; bytes: number }[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file: path.relative(dir, file), bytes: (await stat(file)).size });
  }
  return out;
}
