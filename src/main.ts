#!/usr/bin/env node
import { ConfigError, loadConfig } from './config/config.js';
import { createLogger, type Logger } from './log/logger.js';
import { StartupError } from './process/startup-error.js';
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
    // A setting to change or a directory or port in use: the message says which, a stack trace would not.
    if (err instanceof ConfigError || err instanceof StartupError) {
      process.stderr.write(`flagops: ${err.message}\n`);
      process.exit(err instanceof StartupError ? err.exitCode : 2);
    }
    throw err;
  }
  const shutdown = (signal: string) => {
    logger.info('stopping', { signal });
    service.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error('stop failed', { err });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`flagops: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
