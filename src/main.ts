#!/usr/bin/env node
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { createLogger } from './log/logger.js';
import { startService } from './service.js';

/** `npm start`: control plane and evaluation API in one process (contract §1). */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`flagops: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  const service = await startService(config, logger);
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
