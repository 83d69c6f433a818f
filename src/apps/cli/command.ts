/** Where a command writes and where it runs; injected so tests run commands in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
  env: process.env,
};

/**
 * Exit codes: 0 success, 1 the work found a problem (invalid files), 2 the command line was wrong, 3 the work
 * deletes or changes what needs a confirmation (`flagops import` without --yes) and nothing was done.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unconfirmed: 3 } as const;

/** One `flagops <name>` subcommand. `help` is printed for `flagops <name> --help`. */
export interface Command {
  name: string;
  summary: string;
  help: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** A command-line mistake: the message and the command's help go to stderr, exit code 2. */
export class UsageError extends Error {}
