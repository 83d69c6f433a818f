import type { Context, Next } from 'koa';
import { InvalidInputError, quotedPrefix } from '../errors/kinds.js';

/** The first segment of a request path that is not valid percent-encoding (`%ff`, `%E0%A4%A`), if one is not. */
export function malformedSegment(path: string): string | undefined {
  for (const segment of path.split('/')) {
    if (!segment.includes('%')) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return undefined;
}

/**
 * Refuses a request whose path does not decode: 400 naming the segment. The router hands such a segment to the
 * handler as it was sent, undecoded, which would then answer for an id nobody meant (`flag "%ff" not found`).
 */
export async function refuseMalformedPath(ctx: Context, next: Next): Promise<void> {
  const segment = malformedSegment(ctx.path);
  if (segment !== undefined)
    throw new InvalidInputError(`the path segment "${quotedPrefix(segment)}" is not valid percent-encoding`, 'path');
  await next();
}
