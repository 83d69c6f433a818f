import { type ErrorCode, FlagopsError, RequestCutOffError } from './kinds.js';

/** The one place an error becomes an HTTP status and `{ error: { code, message } }` body (docs/api.md). */
const STATUS: Readonly<Record<ErrorCode, number>> = {
  unauthorized: 401,
  forbidden: 403,
  plan_limit: 403,
  not_found: 404,
  invalid_input: 400,
  conflict: 409,
  version_conflict: 409,
  invalid_in_repository: 409,
  unsupported_media_type: 415,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  git_remote_timeout: 503,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  /** Retry-After, for an error that says when to try again (429, some 503). */
  headers?: Record<string, string>;
  expected: boolean;
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof FlagopsError) {
    const retryAfter = err.details?.retryAfterSeconds;
    return {
      status: err instanceof RequestCutOffError ? err.status : STATUS[err.code],
      body: { error: { code: err.code, message: err.message } },
      ...(typeof retryAfter === 'number' ? { headers: { 'Retry-After': String(retryAfter) } } : {}),
      expected: err.code !== 'internal',
    };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } }, expected: false };
}
