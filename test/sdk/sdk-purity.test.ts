import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The SDK ships to browsers as it is (dist/sdk and the esbuild bundle): it may use only what browsers and
// Node 20 both have, and only the pure evaluation core and the model besides its own files.
const dir = new URL('../../src/sdk/', import.meta.url);
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, dir), 'utf8') }));

describe('the SDK sources', () => {
  it('import only their own files, the evaluation core and the model', () => {
    expect(sources.length).toBeGreaterThan(10);
    for (const { file, text } of sources) {
      for (const [, spec] of text.matchAll(/from\s+'([^']+)'/g)) {
        expect(spec, file).toMatch(/^\.\/[a-z0-9-]+\.js$|^\.\.\/model\/index\.js$|^\.\.\/evaluation\/(index|frozen-copy)\.js$/);
      }
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
