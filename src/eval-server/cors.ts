import type { Context, Next } from 'koa';

/**
 * SDK keys are publishable (service-spec §5), so any origin may call the evaluation API from a browser.
 * ETag is exposed so browser SDKs can send If-None-Match.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'ETag',
});

/** Every answer carries CORS_HEADERS; preflights answer at once. */
export async function cors(ctx: Context, next: Next): Promise<void> {
  ctx.set(CORS_HEADERS);
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, If-None-Match');
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
    return;
  }
  await next();
}
