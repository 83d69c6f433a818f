import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { packageSourcesPlugin } from '../../../scripts/package-sources.mjs';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface BundledServer {
  /** The runnable flagops-mcp entry: `node <file> [args]`. */
  file: string;
  /** Every source file compiled into it, relative to the project root (e.g. "src/apps/mcp/main.ts"). */
  inputs: string[];
  remove(): Promise<void>;
}

/**
 * Builds src/apps/mcp/main.ts into one ESM file, from the sources as they are now. Only the server's own import
 * graph is compiled, so a test never runs a stale dist/ nor waits on other files that do not compile yet.
 * Packages stay external, but for the @flagops ones, built from their sources; the file goes under
 * node_modules/.cache so node resolves the external ones from the project.
 */
export async function bundleServer(): Promise<BundledServer> {
  // A fresh `npm ci` has no node_modules/.cache yet.
  await mkdir(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, 'node_modules/.cache/flagops-mcp-test-'));
  const file = path.join(dir, 'flagops-mcp.mjs');
  const result = await build({
    entryPoints: [path.join(ROOT, 'src/apps/mcp/main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [packageSourcesPlugin],
    outfile: file,
    logLevel: 'silent',
    metafile: true,
  });
  const inputs = Object.keys(result.metafile.inputs).map((input) => path.relative(ROOT, path.resolve(input)));
  return { file, inputs, remove: () => rm(dir, { recursive: true, force: true }) };
}
