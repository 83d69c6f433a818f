#!/usr/bin/env node
import { ConfigError, loadConfig } from './foundations/config/config.js';
import { StateFaultError } from './foundations/errors/kinds.js';
import { createLogger, type Logger } from './foundations/log/logger.js';
import { StartupError } from './foundations/process/startup-error.js';
import { StateFileError } from './foundations/state-files/state-files.js';
import { escapedControls } from './foundations/validation/one-line.js';
import { type Service, startService } from './service.js';

const USAGE = `Usage: node dist/main.js   (or: npm start)

Runs the flagops service: the control plane (API, dashboard, git over HTTP) on FLAGOPS_CONTROL_PORT
(default 4000) and the evaluation API on FLAGOPS_EVAL_PORT (default 4001), on FLAGOPS_HOST (default
127.0.0.1), keeping its data in FLAGOPS_DATA_DIR (default ./data). It takes no other arguments: every
setting is an environment variable, listed in the "Settings" table of the README. SIGTERM or SIGINT stops
it cleanly. Logs are JSON lines on stderr.

Options:
  -h, --help   print this text and exit, starting nothing

Exit codes:
  0  stopped by SIGTERM or SIGINT (or --help)
  1  could not start (the data directory or a port in use, a damaged state file) or failed to stop
  2  a setting that cannot work as given, or an argument the service does not take
`;

/**
 * What the command line asks for. The service is configured by environment variables alone, so anything but
 * --help is a mistake (a flag meant for another command): refused before anything is read or written.
 */
function commandLine(args: readonly string[]): 'start' | 'help' | { unknown: string } {
  if (args.some((arg) => arg === '--help' || arg === '-h')) return 'help';
  return args.length === 0 ? 'start' : { unknown: args[0] };
}

/** `npm start`: control plane and evaluation API in one process. */
async function main(): Promise<void> {
  const asked = commandLine(process.argv.slice(2));
  if (asked === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (asked !== 'start') {
    process.stderr.write(
      `flagops: unknown argument ${JSON.stringify(asked.unknown)}; the service takes none but --help (its settings are environment variables)\n`,
    );
    process.exit(2);
  }
  let logger: Logger;
  let service: Service;
  try {
    const config = loadConfig();
    logger = createLogger({ level: config.logLevel });
    service = await startService(config, logger);
  } catch (err) {
    // A setting to change, a directory or port in use, a damaged state file, one the start must make on a disk
    // that refuses it: the message says which and what to do, a stack trace would not.
    if (err instanceof ConfigError || err instanceof StartupError || err instanceof StateFileError || err instanceof StateFaultError) {
      process.stderr.write(`flagops: ${escapedControls(err.message)}\n`);
      process.exit(err instanceof StartupError ? err.exitCode : err instanceof ConfigError ? 2 : 1);
    }
    throw err;
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    // A signal can come twice: `npm start` passes its own on to the service, and a process manager may signal
    // the whole group (systemd does). The second must not end the stop the first began.
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    service.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error('stop failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`flagops: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
