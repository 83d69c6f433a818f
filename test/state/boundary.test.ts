import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md: the control plane's state is reached through src/foundations/state/index.ts, whatever implements it.
const src = path.resolve(import.meta.dirname, '../../src');
const state = path.join(src, 'foundations', 'state');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'web' ? [] : sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Each file's imports of src/foundations/state, resolved to the file they name. */
function stateImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)]
    .map(([, spec]) => path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')))
    .filter((target) => target.startsWith(`${state}${path.sep}`));
}

describe('the control plane state', () => {
  const outside = sources(src).filter((file) => !file.startsWith(`${state}${path.sep}`));

  it('is imported by the rest of the service through src/foundations/state/index.ts only', () => {
    const users = outside.filter((file) => stateImports(file).length > 0);
    expect(users.length).toBeGreaterThan(3);
    const elsewhere = outside.flatMap((file) =>
      stateImports(file)
        .filter((target) => target !== path.join(state, 'index.ts'))
        .map((target) => `${path.relative(src, file)} → ${path.relative(src, target)}`),
    );
    expect(elsewhere).toEqual([]);
  });

  it('keeps its file implementation to itself: only src/foundations/state/open-control-state.ts chooses it', () => {
    const choosers = sources(state).filter(
      (file) =>
        stateImports(file).some((target) => target.startsWith(`${path.join(state, 'files')}${path.sep}`)) &&
        !file.startsWith(`${path.join(state, 'files')}${path.sep}`),
    );
    expect(choosers.map((file) => path.relative(src, file))).toEqual(['foundations/state/open-control-state.ts']);
  });
});
