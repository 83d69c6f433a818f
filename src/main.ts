#!/usr/bin/env node
import { ConfigError, loadConfig } from './foundations/config/config.js';
import { createLogger, type Logger } from './foundations/log/logger.js';
import { StartupError } from './foundations/process/startup-error.js';
import { StateFileError } from './foundations/state-files/state-files.js';
import { type Service, startService } from './service.js';

/** `npm start`: control plane and evaluation API in one process. */
async function main(): Promise<void> {
  let logger: Logger;
  let service: Service;
  try {
    const config = loadConfig();
    logger = createLogger({ level: config.logLevel });
    service = await startService(config, logger);
  } catch (err) {
    // A setting to change, a directory or port in use, a damaged state file: the message says which and what to
    // do, a stack trace would not.
    if (err instanceof ConfigError || err instanceof StartupError || err instanceof StateFileError) {
      process.stderr.write(`flagops: ${err.message}\n`);
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
