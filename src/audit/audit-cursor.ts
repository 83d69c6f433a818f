import { InvalidInputError } from '../errors/index.js';

/**
 * A cursor names the last entry a page returned: its commit and its place among that commit's entries.
 * Naming the commit rather than a position keeps a cursor valid when new commits land (they come before
 * it) and when the index is rebuilt after a force push that kept the commit. Base64url keeps it opaque.
 */
export interface CursorPosition {
  commit: string;
  offset: number;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECODED = /^([0-9a-f]{40}|[0-9a-f]{64}):(\d{1,6})$/;

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.commit}:${position.offset}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  const m = typeof cursor === 'string' && BASE64URL.test(cursor) ? DECODED.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  const position = m ? { commit: m[1], offset: Number(m[2]) } : null;
  // Base64 decoding forgives stray trailing characters; a cursor must be exactly what was given out.
  if (!position || encodeCursor(position) !== cursor) throw invalidCursor();
  return position;
}

export function invalidCursor(why = 'is not one this audit trail gave out'): InvalidInputError {
  return new InvalidInputError(`cursor ${why}; start again without a cursor`, 'cursor');
}
