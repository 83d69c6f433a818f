import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/architecture.md: storage is two layers. The git plumbing (src/foundations/storage/git) knows objects, refs and
// trees and nothing of flags; the served state (src/foundations/storage/served) reads flags from it; the facade
// (src/foundations/storage/*.ts) composes both. Imports point down only.
const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Every module a file imports, type-only ones included: relative ones as paths from the repository's root. */
function importsOf(file: string): string[] {
  const code = readFileSync(join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  const specs = [...code.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]);
  return specs.map((spec) => (spec.startsWith('.') ? relative(root, join(root, dirname(file), spec)).replace(/\.js$/, '.ts') : spec));
}

const plumbing = sources('src/foundations/storage/git');
const served = sources('src/foundations/storage/served');

describe('the git plumbing layer (src/foundations/storage/git)', () => {
  it('holds the object store, packs, refs, trees and the git CLI', () => {
    for (const file of ['object-store', 'pack-reader', 'git-objects', 'refs', 'ref-watcher', 'tree-writer', 'git-cli', 'housekeeping'])
      expect(plumbing).toContain(`src/foundations/storage/git/${file}.ts`);
  });

  it("imports nothing about flags: only its own files, Node, git libraries, the typed errors, the logger and the event loop's turns", () => {
    const allowed =
      /^(node:.+|isomorphic-git|src\/foundations\/storage\/git\/.+|src\/foundations\/errors\/(kinds|file-system-fault)\.ts|src\/foundations\/log\/logger\.ts|src\/foundations\/process\/loop-turns\.ts)$/;
    const outside = plumbing.flatMap((file) => importsOf(file).flatMap((spec) => (allowed.test(spec) ? [] : [`${file} → ${spec}`])));
    expect(outside).toEqual([]);
  });
});

describe('the served-state layer (src/foundations/storage/served)', () => {
  it('holds what main serves: loading, served state, versions, history and the caches', () => {
    for (const file of [
      'state-loader',
      'served-state',
      'effective-versions',
      'project-folders',
      'served-history-cache',
      'parse-cache',
      'history',
    ])
      expect(served).toContain(`src/foundations/storage/served/${file}.ts`);
  });

  it('builds on the plumbing and never on the facade above it', () => {
    const facade = /^src\/foundations\/storage\/[^/]+\.ts$/;
    const upward = served.flatMap((file) => importsOf(file).flatMap((spec) => (facade.test(spec) ? [`${file} → ${spec}`] : [])));
    expect(upward).toEqual([]);
  });
});
