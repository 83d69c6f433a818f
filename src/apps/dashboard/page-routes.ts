import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';

/** Where scripts/build-dashboard.mjs writes the page: dist/dashboard-web, three levels up from both src/apps/dashboard and dist/apps/dashboard. */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../../dist/dashboard-web/', import.meta.url));

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The built page, read once into memory (a few tens of KiB). Only files present in the directory when it
 * was read can be served, so no request path ever reaches the file system.
 */
export class AssetFiles {
  private loaded: Promise<Map<string, Asset>> | undefined;

  constructor(private readonly dir: string = DEFAULT_ASSETS_DIR) {}

  /** The asset, or null; null for every name while the page is not built. */
  async get(name: string): Promise<Asset | null> {
    this.loaded ??= this.load().catch((err) => {
      this.loaded = undefined; // not built yet: look again on the next request
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map<string, Asset>();
      throw err;
    });
    return (await this.loaded).get(name) ?? null;
  }

  get directory(): string {
    return this.dir;
  }

  private async load(): Promise<Map<string, Asset>> {
    const assets = new Map<string, Asset>();
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      const type = TYPES[path.extname(entry.name)];
      if (!entry.isFile() || type === undefined) continue;
      const body = await readFile(path.join(this.dir, entry.name));
      assets.set(entry.name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
    }
    if (!assets.has('index.html')) {
      throw Object.assign(new Error(`${this.dir} has no index.html`), { code: 'ENOENT' });
    }
    return assets;
  }
}

/**
 * The page may load only our own script and style, talk only to us, and never be framed (clickjacking of
 * the Kill button). Charts are inline SVG built through the DOM, which needs no inline script or style.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>flagops</title>
<p>The dashboard is not built. Run <code>node scripts/build-dashboard.mjs</code> (part of <code>npm run build</code>) and reload.</p>`;

function send(ctx: Context, asset: Asset): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  // Revalidated on every load (a 304 on loopback costs nothing), so a new build is never hidden by a cache.
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', asset.etag);
  if (ctx.get('if-none-match') === asset.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = asset.type;
  ctx.body = asset.body;
}

/** `/` is the single page (its views are hash routes); `/dashboard/assets/<file>` its script and style. */
export function registerPageRoutes(router: Router, assets: AssetFiles): void {
  router.get('/', async (ctx) => {
    const page = await assets.get('index.html');
    if (!page) {
      ctx.status = 503;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = NOT_BUILT;
      return;
    }
    send(ctx, page);
  });
  router.get('/dashboard/assets/:name', async (ctx) => {
    const asset = ctx.params.name === 'index.html' ? null : await assets.get(ctx.params.name);
    if (asset) send(ctx, asset);
  });
}
