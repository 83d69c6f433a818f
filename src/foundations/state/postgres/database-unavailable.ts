import { FlagopsError } from '../../errors/kinds.js';

/**
 * Errors that say the database cannot be reached now (refused, reset, timed out, shutting down, not yet
 * accepting connections), as opposed to a mistake in what was asked: SQLSTATE classes 08 (connection
 * exception) and 57P (operator intervention), and the socket errors of Node.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
const LOST_CONNECTION =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i;

/**
 * The database took a statement and has said nothing for `ms`: it hangs (stopped, a machine that froze), which
 * the driver would wait out for ever, the connection staying open.
 */
export class NoAnswerError extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'NoAnswerError';
  }
}

export function isUnreachable(err: unknown): boolean {
  if (err instanceof NoAnswerError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  return LOST_CONNECTION.test(err.message);
}

/** What a store operation rejects with when the database cannot be reached: 503 `unavailable`, never a raw driver error. */
export function databaseUnavailable(where: string, err: unknown): FlagopsError {
  const reason = err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err);
  return new FlagopsError('unavailable', `the database ${where} cannot be reached: ${reason}`);
}
