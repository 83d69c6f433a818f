/**
 * `npm start` as a user runs it, for process-level tests: the composition root bundled from source and run in
 * its own process, so exit codes, stderr and signals are real.
 *
 * ```ts
 * const entry = await bundleMain();                        // once per file, in beforeAll
 * const svc = startProcess(entry, { FLAGOPS_DATA_DIR: dir, FLAGOPS_CONTROL_PORT: String(await freePort()) });
 * await waitHealthy(`http://127.0.0.1:${port}/healthz`, svc.child);
 * svc.child.kill('SIGTERM'); expect(await svc.exit).toBe(0);
 * ```
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { packageSourcesPlugin } from '../../scripts/package-sources.mjs';

export { freePort } from '../helpers/free-port.mjs';

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything written to stderr so far (the JSON log lines, or the one-line start-up refusal). */
  stderr: string[];
  /** Resolves with the exit code (null after a signal). */
  exit: Promise<number | null>;
}

/**
 * Bundles src/main.ts (or `source`, e.g. src/apps/cli/main.ts) three folders below the project root, as the built
 * modules are (dist/foundations/validation/…): external packages resolve from node_modules and the schemas from
 * ../../../schemas, exactly as in the built
 * package; the @flagops packages come from their sources. With `gitRunner`, the git runner's module is bundled
 * beside it, as the built package has it, so that git over HTTP runs in its helper process. Remove it after.
 */
export async function bundleMain(
  options: { source?: string; gitRunner?: boolean } = {},
): Promise<{ entry: string; remove: () => Promise<void> }> {
  const dir = path.join(process.cwd(), 'test-artifacts', `bundle-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const entryPoints: Record<string, string> = { main: options.source ?? 'src/main.ts' };
  if (options.gitRunner) entryPoints['git-runner-process'] = 'src/apps/git-http/git-runner-process.ts';
  await build({
    entryPoints,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    plugins: [packageSourcesPlugin],
    outdir: path.join(dir, 'dist'),
    logLevel: 'silent',
  });
  return { entry: path.join(dir, 'dist', 'main.js'), remove: () => rm(dir, { recursive: true, force: true }) };
}

export function startProcess(entry: string, env: Record<string, string>, args: string[] = [], cwd = process.cwd()): ServiceProcess {
  const stderr: string[] = [];
  const child = spawn(process.execPath, [entry, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr, exit };
}

export async function waitHealthy(url: string, child: ChildProcess, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} not healthy within ${ms} ms`);
}
