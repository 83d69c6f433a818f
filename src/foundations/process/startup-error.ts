/**
 * A start that cannot go on for a reason the operator can fix (the data directory is in use, a port is
 * taken): the message says what and which setting to change, and the process exits non-zero without a
 * stack trace. Thrown before anything is written, or after undoing what was.
 */
export class StartupError extends Error {
  constructor(
    message: string,
    /** The exit code: 2 for a setting that cannot work as given, 1 otherwise. */
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}
