import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { AssetFiles, registerPageRoutes } from '../../src/apps/dashboard/page-routes.js';
import { errorMiddleware } from '../../src/foundations/http/error-middleware.js';
import { listen, type RunningServer } from '../../src/foundations/http/serve.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { useDataDir } from './helpers/temp-dir.js';

describe('serving the page', () => {
  const tempDir = useDataDir();
  let server: RunningServer | undefined;
  afterEach(() => server?.close());

  async function serve(dir: string): Promise<string> {
    const app = new Koa();
    const router = new Router();
    registerPageRoutes(router, new AssetFiles(dir));
    app.use(errorMiddleware(silentLogger));
    app.use(router.routes());
    server = await listen(app, '127.0.0.1', 0);
    return server.url;
  }

  it('explains how to build it while it is not built (503), and serves it once it is, without a restart', async () => {
    const dir = path.join(await tempDir(), 'web');
    const url = await serve(dir);
    const missing = await fetch(`${url}/`);
    expect(missing.status).toBe(503);
    expect(await missing.text()).toContain('node scripts/build-dashboard.mjs');
    await mkdir(dir);
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>x</title>');
    await writeFile(path.join(dir, 'app.js'), 'console.log(1)');
    expect((await fetch(`${url}/`)).status).toBe(200);
  });

  it('sends the page with a strict CSP, no framing, no sniffing and no referrer', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'index.html'), '<!doctype html>');
    const res = await fetch(`${await serve(dir)}/`);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('answers 304 to a revalidation with the same ETag', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'index.html'), '<!doctype html>');
    await writeFile(path.join(dir, 'style.css'), 'body{}');
    const url = await serve(dir);
    const first = await fetch(`${url}/dashboard/assets/style.css`);
    expect(first.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await fetch(`${url}/dashboard/assets/style.css`, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('serves only the built files: anything else, or a path that leaves the directory, is 404', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'index.html'), '<!doctype html>');
    await writeFile(path.join(dir, 'notes.txt'), 'not an asset type');
    const url = await serve(dir);
    for (const name of ['nope.js', 'notes.txt', 'index.html', '..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd']) {
      const res = await fetch(`${url}/dashboard/assets/${name}`);
      expect(res.status, name).toBe(404);
      expect((await res.json()).error.code).toBe('not_found');
    }
  });
});
