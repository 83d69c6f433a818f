import { ConfigError } from '../config/config.js';
import { isOrgName, type KeyKind, KIND_PREFIX, keyPrefix, kindOfKey, secretOf } from './key-format.js';

/** Longer keys are refused everywhere, so nobody can make us hash megabytes per request. */
export const MAX_SECRET_LENGTH = 256;
/** Fewer secret characters than this and a bootstrap key is refused: a hand-made key must still resist guessing. */
export const MIN_BOOTSTRAP_SECRET_LENGTH = 24;
/** What generated keys have, and what the error recommends. */
export const RECOMMENDED_SECRET_LENGTH = 32;
/** A secret made of fewer different characters than this is accepted with a warning: it looks typed, not random. */
const MIN_DISTINCT_CHARACTERS = 10;

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
 * Checks one `org:key` pair of FLAGOPS_BOOTSTRAP_KEYS (docs/credentials.md). Errors name the organisation and the
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
  if (kind === null)
    throw new ConfigError(
      `${where} (organisation ${org}): the key must start with ${KIND_PREFIX.admin} (admin) or ${KIND_PREFIX.agent} (agent)`,
    );
  if (kind === 'sdk') {
    throw new ConfigError(
      `${where} (organisation ${org}): an sdk key belongs to one project and environment, which a bootstrap entry cannot name; create sdk keys with POST /api/v1/keys`,
    );
  }
  const secret = secretOf(key);
  if (secret.length < MIN_BOOTSTRAP_SECRET_LENGTH) {
    throw new ConfigError(
      `${where} (organisation ${org}): the key has ${secret.length} characters after its ${KIND_PREFIX[kind]} prefix; a bootstrap key needs at least ${MIN_BOOTSTRAP_SECRET_LENGTH} (${RECOMMENDED_SECRET_LENGTH} random ones recommended, e.g. ${KIND_PREFIX[kind]}$(openssl rand -hex 16))`,
    );
  }
  if (secret.length > MAX_SECRET_LENGTH)
    throw new ConfigError(`${where} (organisation ${org}): the key is longer than ${MAX_SECRET_LENGTH} characters after its prefix`);
  if (!PRINTABLE.test(secret))
    throw new ConfigError(`${where} (organisation ${org}): the key may contain only printable ASCII characters, no spaces`);
  const prefix = keyPrefix(key);
  const entry: BootstrapEntry = { org, key, kind, prefix };
  if (new Set(secret).size < MIN_DISTINCT_CHARACTERS) {
    entry.warning = `bootstrap key ${prefix}… of organisation ${org} uses only ${new Set(secret).size} different characters after its prefix; use random ones (${RECOMMENDED_SECRET_LENGTH} recommended)`;
  }
  return entry;
}
