import { mkdir, writeFile } from 'node:fs/promises';
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
  // The folder first: with the state in a database nothing else makes it, and a key made but not written down
  // would leave nobody able to sign in.
  const file = path.join(dataDir, 'state', INITIAL_KEY_FILE);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const created = await keys.createKey(DEFAULT_ORG, { kind: 'admin', name: 'initial admin' });
  await writeFile(file, `${created.key}\n`, { mode: 0o600 });
  logger.warn('first start: created organisation "default" with an admin key; read it from the file, then delete the file', {
    file,
    prefix: created.prefix,
  });
}
