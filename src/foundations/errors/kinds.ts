/** The stable error codes callers see (docs/api.md). The HTTP status of each lives in http-status.ts, nowhere else. */
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
  'git_remote_timeout',
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

export class UnauthorizedError extends FlagopsError {
  constructor(message = 'a valid credential is required') {
    super('unauthorized', message);
  }
}

export class ForbiddenError extends FlagopsError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class PlanLimitError extends FlagopsError {
  constructor(limit: number) {
    super('plan_limit', `the plan allows at most ${limit} projects`, { limit });
  }
}

/** `hint`, when given, says how to find what was meant ("… not found: <hint>"). */
export class NotFoundError extends FlagopsError {
  constructor(what: string, hint?: string) {
    super('not_found', hint === undefined ? `${what} not found` : `${what} not found: ${hint}`);
  }
}

/** How much of a name or value from a request an error message quotes: enough to know it by, never a body's worth. */
export const QUOTED_LIMIT = 200;

/** `text`, which came in a request, as an error message quotes it: its first QUOTED_LIMIT characters, then `…`. */
export function quotedPrefix(text: string): string {
  return text.length <= QUOTED_LIMIT ? text : `${text.slice(0, QUOTED_LIMIT)}…`;
}

/**
 * Bad input; `field` names the offending field or file path so the caller can fix it. The field comes from
 * the request (an unknown field is named by its key): where the message quotes it, it quotes a bounded prefix.
 */
export class InvalidInputError extends FlagopsError {
  readonly field?: string;

  constructor(message: string, field?: string) {
    const shown = field === undefined ? undefined : quotedPrefix(field);
    const quoting = field === undefined || shown === field ? message : message.replaceAll(field, `${shown}`);
    super('invalid_input', quoting, shown === undefined ? undefined : { field: shown });
    this.field = shown;
  }
}

/** Files a write would commit that the repository does not take: invalid on their own, or beside main's other files. */
export class InvalidContentError extends InvalidInputError {}

export class ConflictError extends FlagopsError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class VersionConflictError extends FlagopsError {
  constructor(
    readonly currentVersion: number,
    expectedVersion: number,
  ) {
    super(
      'version_conflict',
      `expectedVersion ${expectedVersion} does not match the current version ${currentVersion}; re-read and retry`,
      {
        currentVersion,
      },
    );
  }
}

/** A proposal's change no longer applies: main changed what it changes since it was proposed. */
export class ProposalConflictError extends FlagopsError {
  constructor(message: string) {
    super('version_conflict', message);
  }
}

export class UnsupportedMediaTypeError extends FlagopsError {
  constructor(message = 'the body must be application/json') {
    super('unsupported_media_type', message);
  }
}

export class PayloadTooLargeError extends FlagopsError {
  constructor(limitBytes: number) {
    super('payload_too_large', `the body is larger than ${limitBytes} bytes`);
  }
}

/** The status of a request the client closed before sending it whole (nginx's; no answer reaches the client). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * The request's body stopped coming before it was whole, its connection closed: the client went away (499, "client
 * closed request", as nginx counts it), or the server had already answered it and was closing its connection (408:
 * not received in time). Nobody is left to answer and the service did nothing wrong: the request is counted with
 * that status, never as a server error.
 */
export class RequestCutOffError extends FlagopsError {
  constructor(readonly status: number) {
    super(
      'invalid_input',
      status === CLIENT_CLOSED_REQUEST
        ? 'the client closed the connection before sending the whole request'
        : `the request was answered ${status} before it was whole, and its connection closed`,
    );
  }
}

/** Too many failed attempts from the caller's address: try again after `retryAfterSeconds` (Retry-After). */
export class RateLimitedError extends FlagopsError {
  constructor(message: string, retryAfterMs: number) {
    super('rate_limited', message, { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) });
  }
}

/** The store could not apply a write because main moved in a way that conflicts with it. */
export class WriteConflictError extends FlagopsError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/**
 * A write to a flag (or a project) that an invalid file on main holds back: the change would be committed
 * but not served until the file is fixed, so it is refused. `files` are repository paths, never disk paths.
 */
export class InvalidInRepositoryError extends FlagopsError {
  constructor(
    what: string,
    readonly files: ReadonlyArray<{ file: string; line: number | null; message: string }>,
  ) {
    const listed = files.map((f) => `${f.file}${f.line === null ? '' : `:${f.line}`}: ${f.message}`).join('; ');
    super('invalid_in_repository', `${what} is held back by an invalid file on main (${listed}); fix or revert that file first`, {
      files: files.map((f) => f.file),
    });
  }
}

/**
 * The service listens but does not serve what the request needs yet (it is starting): 503 with Retry-After, and
 * never a 404, since what was asked for may well exist. Clients try again shortly.
 */
export class StartingError extends FlagopsError {
  constructor(message: string) {
    super('unavailable', message, { retryAfterSeconds: 1 });
  }
}

/**
 * An organisation's flags repository cannot be read (a missing or corrupt object) or written (read-only, a full
 * disk): 503, with the fault in words and no path of the service's disk. Nothing was changed or acknowledged.
 */
export class StorageFaultError extends FlagopsError {
  constructor(
    readonly kind: 'read' | 'write',
    /** What fails, in words: `git object 1a2b3c4 is corrupt (…)`, `read-only file system`. */
    readonly fault: string,
  ) {
    super(
      'unavailable',
      `the flags repository cannot be ${kind === 'read' ? 'read' : 'written'}: ${fault}; the operator sees it in /healthz`,
    );
  }
}

/**
 * A file of the service's own state in the data directory (keys, users, sessions, triggers, webhooks, counts)
 * cannot be written (a full disk, read-only): 503, with the fault in words and the file's name, never its path.
 * The file holds what it held before: state files are replaced whole or appended to and cut back.
 */
export class StateFaultError extends FlagopsError {
  constructor(
    /** The file's name: `keys.json`. */
    readonly file: string,
    /** What fails, in words: `no space left on the device (ENOSPC)`. */
    readonly fault: string,
  ) {
    super('unavailable', `the state file ${file} cannot be written: ${fault}`);
  }
}

/** Remote mode: main holds commits the git remote lacks while the remote got others; nothing was changed. */
export class RemoteDivergedError extends FlagopsError {
  constructor(remote: string) {
    super('unavailable', `main and the git remote ${remote} have diverged; nothing was changed`);
  }
}

/**
 * Remote mode: main holds kills the git remote has not taken yet (slow to reach it, or another control plane's,
 * made here from its record), so a change cannot be pushed on top of the remote's main now: 503, try again in a
 * moment. Not a divergence: the kills' push is retried every second, and nothing needs an operator.
 */
export class HeldKillsAheadError extends FlagopsError {
  constructor(remote: string) {
    super(
      'unavailable',
      `main here holds kills the git remote ${remote} has not taken yet (their push is retried every second); nothing was changed: try again in a moment`,
      { retryAfterSeconds: 1 },
    );
  }
}

/**
 * Remote mode: the git host did not answer a push of a change within its deadline (FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS):
 * 503. Main did not move, so nothing was acknowledged or served; the host may still have taken the commit before it
 * stopped answering, and then it reaches main with the next fetch, once (never made a second time).
 */
export class GitRemoteTimeoutError extends FlagopsError {
  /** `seconds`: the push's deadline; null when it was cut off sooner for a kill waiting behind it. */
  constructor(remote: string, seconds: number | null) {
    const when = seconds === null ? 'while a kill waited behind this change' : `within ${seconds} s`;
    super(
      'git_remote_timeout',
      `the git remote ${remote} did not answer ${when}; the change was not made here (if the host took it ` +
        'before it stopped answering, it appears once the host answers again): read it before trying again',
      { retryAfterSeconds: 1 },
    );
  }
}
