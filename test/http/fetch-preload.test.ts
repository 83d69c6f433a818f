import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const SERVE = pathToFileURL(path.resolve(import.meta.dirname, '../../dist/foundations/http/serve.js')).href;

// Koa's body setter touches the global `Response`, which makes Node compile its fetch implementation on the
// event loop (tens of milliseconds). In a fresh process (this test's worker may have loaded it already), the
// built server loads it before it listens, so no answer of a running service pays for it.
describe('a server started by listen()', () => {
  it('has loaded fetch (undici) before it listens, not on its first JSON answer', () => {
    const script = `
      import Koa from 'koa';
      import { listen } from ${JSON.stringify(SERVE)};
      const loaded = () => process.moduleLoadList.some((m) => m.includes('undici'));
      const before = loaded();
      const server = await listen(new Koa(), '127.0.0.1', 0);
      const after = loaded();
      await server.close();
      console.log(JSON.stringify({ before, after }));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ before: false, after: true });
  });
});
