import type { Context, Next } from 'koa';
import { toHttpError } from '../errors/http-status.js';
import { RequestCutOffError } from '../errors/kinds.js';
import type { Logger } from '../log/logger.js';

/**
 * First middleware of every app: any thrown error becomes the `{ error: { code, message } }` body, logged once.
 * `servedElsewhere` names where a path this app does not serve is served (the other port), for the 404's message.
 */
export function errorMiddleware(logger: Logger, servedElsewhere: (path: string) => string | undefined = () => undefined) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        const elsewhere = servedElsewhere(ctx.path);
        const message = `no route for ${ctx.method} ${ctx.path}${elsewhere === undefined ? '' : `: ${elsewhere}`}`;
        ctx.body = { error: { code: 'not_found', message } };
      }
    } catch (err) {
      const { status, body, headers, expected } = toHttpError(err);
      logRequestFailure(logger, err, expected, { method: ctx.method, path: ctx.path });
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.body = body;
    }
  };
}

/**
 * Logs a failed request once: an unexpected error as an error, with its stack; a request whose client went away
 * (or was too slow) at debug, without one, since the service has nothing to fix and a flood of them says nothing.
 */
export function logRequestFailure(logger: Logger, err: unknown, expected: boolean, request: { method?: string; path?: string }): void {
  if (err instanceof RequestCutOffError) logger.debug('request cut off before its body was whole', { ...request, status: err.status });
  else if (!expected) logger.error('request failed', { ...request, err });
}
