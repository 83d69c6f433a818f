import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log/logger.js';
import type { KeyService } from './key-service.js';

export const DEFAULT_ORG = 'default';
export const INITIAL_KEY_FILE = 'initial-admin-key';

/**
 * Zero configuration: on a first start with no keys at all and no FLAGOPS_BOOTSTRAP_KEYS, make an organisation
 * `default` with one admin key, and leave the key (once) in `<dataDir>/state/initial-admin-key`, readable by
 * its owner only — as Grafana or Jenkins hand out an initial admin password.
 */
export async function ensureFirstAdminKey(keys: KeyService, dataDir: string, logger: Logger): Promise<void> {
  if (keys.organisations().length > 0) return;
  const created = await keys.createKey(DEFAULT_ORG, { kind: 'admin', name: 'initial admin' });
  const file = path.join(dataDir, 'state', INITIAL_KEY_FILE);
  await writeFile(file, `${created.key}\n`, { mode: 0o600 });
  logger.warn('first start: created organisation "default" with an admin key; read it from the file, then delete the file', {
    file,
    prefix: created.prefix,
  });
}
