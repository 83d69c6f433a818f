import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { packageSourcesPlugin } from '../../scripts/package-sources.mjs';

export interface NodeBundle {
  /** The bundled ESM file, in a temp dir of its own. */
  file: string;
  /** Deletes the bundle's temp dir. Safe to call twice. */
  remove(): Promise<void>;
}

/**
 * Bundles a TypeScript entry (and the sources it imports, the @flagops packages' included) into one ESM file Node
 * can run as is. The test removes it with `bundle.remove()` (in a `finally`).
 */
export async function bundleForNode(entry: string, alias: Record<string, string> = {}): Promise<NodeBundle> {
  const dir = await mkdtemp(path.join(tmpdir(), 'flagops-bundle-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const file = path.join(dir, `${path.basename(entry).replace(/\.[a-z]+$/, '')}.mjs`);
  try {
    await build({
      entryPoints: [entry],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      alias,
      logLevel: 'silent',
      packages: 'external',
      plugins: [packageSourcesPlugin],
    });
  } catch (err) {
    await remove();
    throw err;
  }
  return { file, remove };
}

export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Epoch ms at which the process exited. */
  exitedAt: number;
}

/** Runs `node <file>` with extra environment; kills it after `timeoutMs`. */
export function runNode(file: string, env: Record<string, string>, timeoutMs = 20_000, nodeArgs: string[] = []): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${path.basename(file)} still running after ${timeoutMs} ms; stdout ${stdout}; stderr ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, exitedAt: Date.now() });
    });
  });
}
