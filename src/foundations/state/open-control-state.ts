import path from 'node:path';
import type { Logger } from '../log/logger.js';
import type { ControlState } from './control-state.js';
import { FileControlState } from './files/file-control-state.js';
import { appendPushRecords } from './files/file-push-log.js';
import type { PushRecord } from './push-log.js';

export interface ControlStateOptions {
  /** FLAGOPS_DATA_DIR. */
  dataDir: string;
  /** What the state has to say (a damaged stats log read, a compaction). */
  logger?: Logger;
  /**
   * Whether opening may create what the state needs (files: the state directory, mode 0700); default true. A
   * command given a --data-dir opens with false, so a mistyped one is left as it was when the command refuses.
   */
  create?: boolean;
}

/**
 * The control plane's state. Its one implementation today keeps files in the data directory (src/foundations/state/files),
 * which one service per data directory owns.
 */
export async function openControlState(options: ControlStateOptions): Promise<ControlState> {
  return FileControlState.open(path.resolve(options.dataDir), { logger: options.logger, create: options.create });
}

/**
 * Records pushes from the pre-receive hook, a process git starts for a push through the service: `target` is
 * what PushLog.hookTarget gave the service (with files, the organisation's push log).
 */
export function appendHookPushRecords(target: string, records: readonly PushRecord[]): Promise<void> {
  return appendPushRecords(target, records);
}
