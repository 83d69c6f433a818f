import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The SDKs run @flagops/core in browsers, and the server on its hot path: it must stay pure.
const dir = new URL('../../packages/core/src/', import.meta.url);
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, dir), 'utf8') }));

describe('the evaluation core (@flagops/core)', () => {
  it('imports only its own files', () => {
    expect(sources.length).toBeGreaterThan(5);
    for (const { file, text } of sources) {
      for (const [, spec] of text.matchAll(/from\s+'([^']+)'/g)) expect(spec, file).toMatch(/^\.\/[a-z0-9-]+\.js$/);
    }
  });

  it('uses no Node-only API, clock, randomness or I/O', () => {
    const forbidden = /\b(Buffer|process|require|setTimeout|setInterval|Date|performance|fetch|TextEncoder)\b|Math\.random|node:/;
    for (const { file, text } of sources) {
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''); // comments may mention them
      expect(code.match(forbidden)?.[0], file).toBeUndefined();
    }
  });
});
