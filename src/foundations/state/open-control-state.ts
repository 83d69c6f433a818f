import path from 'node:path';
import type { Logger } from '../log/logger.js';
import type { ControlState } from './control-state.js';
import { FileControlState } from './files/file-control-state.js';
import { appendPushRecords } from './files/file-push-log.js';
import { PG_HOOK_TARGET } from './postgres/hook-target-prefix.js';
import type { PushRecord } from './push-log.js';

export interface ControlStateOptions {
  /** FLAGOPS_DATA_DIR. */
  dataDir: string;
  /** FLAGOPS_DATABASE_URL: when set, the state is in that PostgreSQL database instead of the data directory. */
  databaseUrl?: string;
  /** What the state has to say (a damaged stats log read, a compaction, the database's connection). */
  logger?: Logger;
  /**
   * Whether opening may create what the state needs (files: the state directory, mode 0700); default true. A
   * command given a --data-dir opens with false, so a mistyped one is left as it was when the command refuses.
   */
  create?: boolean;
}

/**
 * The control plane's state: in PostgreSQL when a database is given (src/foundations/state/postgres, shared by
 * every control plane given it, its schema migrated here), otherwise files in the data directory
 * (src/foundations/state/files), which one service per data directory owns. The PostgreSQL client is loaded only
 * when a database is given.
 */
export async function openControlState(options: ControlStateOptions): Promise<ControlState> {
  if (options.databaseUrl) {
    const { PgControlState } = await import('./postgres/pg-control-state.js');
    return PgControlState.open(options.databaseUrl, { logger: options.logger });
  }
  return FileControlState.open(path.resolve(options.dataDir), { logger: options.logger, create: options.create });
}

/**
 * Records pushes from the pre-receive hook, a process git starts for a push through the service: `target` is
 * what PushLog.hookTarget gave the service (with files, the organisation's push log; with PostgreSQL, the
 * database and the organisation, recorded on a connection of the hook's own).
 */
export async function appendHookPushRecords(target: string, records: readonly PushRecord[]): Promise<void> {
  if (target.startsWith(PG_HOOK_TARGET)) {
    const { appendHookPushes } = await import('./postgres/hook-push-records.js');
    return appendHookPushes(target.slice(PG_HOOK_TARGET.length), records);
  }
  return appendPushRecords(target, records);
}
