import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Asset, AssetFiles } from './asset-files.js';

/**
 * The page may load only our own script and style, talk only to us, and never be framed (clickjacking of
 * the Kill button). Charts are inline SVG built through the DOM, which needs no inline script or style.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
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
