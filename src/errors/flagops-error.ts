/** The stable error codes of contract §3. The HTTP status of each lives in http-status.ts, nowhere else. */
export const ERROR_CODES = [
  'unauthorized',
  'forbidden',
  'plan_limit',
  'not_found',
  'invalid_input',
  'conflict',
  'version_conflict',
  'invalid_in_repository',
  'unsupported_media_type',
  'payload_too_large',
  'rate_limited',
  'internal',
  'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Base of every error we mean to report to a caller. `details` is machine-readable extra data. */
export class FlagopsError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
