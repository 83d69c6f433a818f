import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { StateFileError, unreadableStateFile, writeFileAtomic } from '../state-files/state-files.js';

/** Stored hashes are `<scheme>:<hex>`, so a later scheme can be introduced without guessing. */
const SCHEME = 'hmac-sha256';
const PEPPER_BYTES = 32;
export const PEPPER_FILE = 'pepper';
/** Not a key (every key begins with svc_), so the fingerprint is no key's hash. */
const PEPPER_CHECK_TEXT = 'flagops pepper check';

/**
 * HMAC-SHA-256 of a key under the installation's secret pepper. A slow KDF (scrypt, argon2) protects
 * guessable passwords; generated keys carry ~190 random bits, and the evaluation server authenticates
 * on every request, so a fast keyed hash is the right tool. The pepper lives in its own file, so a leaked
 * keys.json alone does not even let an attacker test guesses of hand-made (bootstrap) keys.
 */
export class KeyHasher {
  constructor(private readonly pepper: Buffer) {
    if (pepper.length < PEPPER_BYTES) throw new Error(`the key pepper must be at least ${PEPPER_BYTES} bytes`);
  }

  digest(rawKey: string): Buffer {
    return createHmac('sha256', this.pepper).update(rawKey, 'utf8').digest();
  }

  /**
   * The pepper's fingerprint, recorded with the hashes made under it, so a start can tell that the pepper it
   * read is not the one they were made with (damaged on disk, restored from another backup). An HMAC of a
   * fixed text that no key can be: it gives nothing away about the pepper or any key.
   */
  pepperCheck(): string {
    return KeyHasher.encode(createHmac('sha256', this.pepper).update(PEPPER_CHECK_TEXT, 'utf8').digest());
  }

  /** Constant-time comparison, so response time does not reveal how much of a hash matched. */
  static equal(a: Buffer, b: Buffer): boolean {
    return a.length === b.length && timingSafeEqual(a, b);
  }

  static encode(digest: Buffer): string {
    return `${SCHEME}:${digest.toString('hex')}`;
  }

  /** The digest of a stored hash, or null when it is not in a scheme we know. */
  static decode(stored: string): Buffer | null {
    const colon = stored.indexOf(':');
    if (colon < 0 || stored.slice(0, colon) !== SCHEME) return null;
    const hex = stored.slice(colon + 1);
    if (!/^[0-9a-f]{64}$/.test(hex)) return null;
    return Buffer.from(hex, 'hex');
  }
}

/**
 * Reads `<stateDir>/pepper`, creating it when `mayCreate`. When keys already exist, a missing pepper is an
 * error rather than a fresh one: a new pepper would silently invalidate every stored key.
 */
export async function loadPepper(stateDir: string, mayCreate: boolean): Promise<Buffer> {
  const file = path.join(stateDir, PEPPER_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadableStateFile(file, err);
    if (!mayCreate) {
      throw new StateFileError(
        `${file} is missing but keys.json holds keys hashed with it; restore it from a backup of the state directory, or remove keys.json to start with no keys`,
      );
    }
    const pepper = randomBytes(PEPPER_BYTES);
    await writeFileAtomic(file, `${pepper.toString('base64')}\n`, 0o600);
    return pepper;
  }
  const pepper = Buffer.from(text.trim(), 'base64');
  if (pepper.length < PEPPER_BYTES) {
    throw new StateFileError(
      `${file} is damaged: expected ${PEPPER_BYTES} base64-encoded bytes; every key in keys.json is hashed with it: restore it from a backup of the state directory, or remove it and keys.json to start with no keys`,
    );
  }
  return pepper;
}
