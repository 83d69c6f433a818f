import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The SDK ships to browsers as it is (its package's modules and the browser bundle): it may use only what
// browsers and Node 20 both have, and only @flagops/core besides its own files.
const dir = new URL('../../packages/sdk/src/', import.meta.url);
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, dir), 'utf8') }));

describe('the SDK sources', () => {
  it('import only their own files and @flagops/core', () => {
    expect(sources.length).toBeGreaterThan(5);
    for (const { file, text } of sources) {
      for (const [, spec] of text.matchAll(/from\s+'([^']+)'/g)) expect(spec, file).toMatch(/^\.\/[a-z0-9-]+\.js$|^@flagops\/core$/);
    }
  });

  it('use no Node-only API', () => {
    const nodeOnly = /\b(Buffer|process|require|__dirname|setImmediate|global)\b|node:|\.unref\(/;
    for (const { file, text } of sources) {
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code.match(nodeOnly)?.[0], file).toBeUndefined();
    }
  });
});
