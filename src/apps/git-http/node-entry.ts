import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How to run one of this package's modules as its own node process, by absolute paths so it works whatever
 * PATH says: this node binary and the compiled module (dist/…/name.js), or, when the service runs from
 * source (the test suite), the TypeScript module through vite-node.
 */
export function nodeEntry(moduleUrl: string, relative: string): string[] {
  const here = fileURLToPath(moduleUrl);
  const base = path.join(path.dirname(here), relative);
  if (here.endsWith('.js')) return [process.execPath, `${base}.js`];
  const root = path.resolve(path.dirname(here), '..', '..', '..');
  const viteNode = path.join(root, 'node_modules', 'vite-node', 'vite-node.mjs');
  if (!existsSync(viteNode)) throw new Error('running from source needs vite-node; build with npm run build');
  return [process.execPath, viteNode, `${base}.ts`];
}
