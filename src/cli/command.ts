import type { CliIo } from './io.js';

/** One `flagops <name>` subcommand. `help` is printed for `flagops <name> --help`. */
export interface Command {
  name: string;
  summary: string;
  help: string;
  run(args: string[], io: CliIo): Promise<number>;
}

/** A command-line mistake: the message and the command's help go to stderr, exit code 2. */
export class UsageError extends Error {}
