import { ConfigError } from '../config/config.js';
import { KIND_PREFIX, type KeyKind, isOrgName, keyPrefix, kindOfKey, secretOf } from './key-format.js';

/** Longer keys are refused everywhere, so nobody can make us hash megabytes per request. */
export const MAX_SECRET_LENGTH = 256;
/** Below this many secret characters a bootstrap key is accepted with a warning. */
export const RECOMMENDED_SECRET_LENGTH = 16;

export interface BootstrapEntry {
  org: string;
  key: string;
  kind: Exclude<KeyKind, 'sdk'>;
  prefix: string;
  /** Set when the key is weak enough that the operator should replace it. */
  warning?: string;
}

const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * Checks one `org:key` pair of FLAGOPS_BOOTSTRAP_KEYS (contract §1). Errors name the organisation and the
 * entry's position, never the key, because they end up in logs.
 */
export function checkBootstrapEntry(org: string, key: string, index: number): BootstrapEntry {
  const where = `FLAGOPS_BOOTSTRAP_KEYS entry ${index + 1}`;
  if (!isOrgName(org)) {
    throw new ConfigError(
      `${where}: organisation ${JSON.stringify(org)} is not a valid name (lowercase letters, digits, "_" and "-", starting with a letter or digit, at most 63 characters)`,
    );
  }
  const kind = kindOfKey(key);
  if (kind === null) throw new ConfigError(`${where} (organisation ${org}): the key must start with ${KIND_PREFIX.admin} (admin) or ${KIND_PREFIX.agent} (agent)`);
  if (kind === 'sdk') {
    throw new ConfigError(
      `${where} (organisation ${org}): an sdk key belongs to one project and environment, which a bootstrap entry cannot name; create sdk keys with POST /api/v1/keys`,
    );
  }
  const secret = secretOf(key);
  if (secret.length === 0) throw new ConfigError(`${where} (organisation ${org}): the key has nothing after its ${KIND_PREFIX[kind]} prefix`);
  if (secret.length > MAX_SECRET_LENGTH) throw new ConfigError(`${where} (organisation ${org}): the key is longer than ${MAX_SECRET_LENGTH} characters after its prefix`);
  if (!PRINTABLE.test(secret)) throw new ConfigError(`${where} (organisation ${org}): the key may contain only printable ASCII characters, no spaces`);
  const prefix = keyPrefix(key);
  const entry: BootstrapEntry = { org, key, kind, prefix };
  if (secret.length < RECOMMENDED_SECRET_LENGTH) {
    entry.warning = `bootstrap key ${prefix}… of organisation ${org} has only ${secret.length} characters after its prefix; use at least ${RECOMMENDED_SECRET_LENGTH} random ones (32 recommended)`;
  }
  return entry;
}
