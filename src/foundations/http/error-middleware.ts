import type { Context, Next } from 'koa';
import { toHttpError } from '../errors/http-status.js';
import type { Logger } from '../log/logger.js';

/** First middleware of every app: any thrown error becomes the `{ error: { code, message } }` body, logged once. */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: { code: 'not_found', message: `no route for ${ctx.method} ${ctx.path}` } };
      }
    } catch (err) {
      const { status, body, headers, expected } = toHttpError(err);
      if (!expected) logger.error('request failed', { method: ctx.method, path: ctx.path, err });
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.body = body;
    }
  };
}
